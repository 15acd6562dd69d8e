import sys

from harness._app.cli._entry import main

sys.exit(main())
