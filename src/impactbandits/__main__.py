from impactbandits.cli import main

main()
