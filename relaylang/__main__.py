"""`python -m relaylang` is the `relay` command."""
import sys

from .cli import main

sys.exit(main())
