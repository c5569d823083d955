from kafkabench.cli.app import main

main()
