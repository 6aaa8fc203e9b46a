from .cli.train import main

main()
