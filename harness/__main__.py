import sys

from harness._app.cli._main import main

sys.exit(main())
