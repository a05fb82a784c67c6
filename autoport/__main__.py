from autoport.cli import main

main()
