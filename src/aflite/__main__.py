from aflite.cli.main import main

main()
