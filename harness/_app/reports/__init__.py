"""Reports of a run: the JSON document and its schema, text, HTML, the survival chart and JUnit XML."""
