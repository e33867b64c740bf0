"""`python -m grading.grade` (what `make grade` runs)."""
from grading.grade import main

if __name__ == "__main__":
    main()
