from s_code.cli import main

raise SystemExit(main())
