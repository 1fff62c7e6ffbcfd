import sys

from nova_fork import cmd

sys.exit(cmd.main())
