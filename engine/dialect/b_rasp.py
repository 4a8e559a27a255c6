"""B-RASP (Yang, Strobl, Chiang, Angluin): finite (Boolean) values; attention picks the leftmost or rightmost
selected key; counts only as "is there any?" tests."""
from .fragment import Fragment

B_RASP = Fragment(
    "b-rasp", "B-RASP",
    "B-RASP programs are exactly the masked unique-hard-attention transformers (Yang, Chiang and "
    "Angluin 2024), and soft attention simulates them at every length with the positional encoding "
    "1/(i+1) and temperature scaling (Yang et al., Simulating hard attention using soft attention).",
    ("counting", "mean", "unique", "periodic", "lookup"),
)
