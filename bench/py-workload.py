# bench/py-workload.py [ROUNDS]: a CPU-bound Python program for bench/report-speed.sh's
# DWARF recording of an interpreter nobody here tuned for: JSON encode/decode and a
# regular-expression word count over generated (seeded, so repeatable) records.
import json
import random
import re
import sys

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
rng = random.Random(16)
words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
         for _ in range(2000)]
records = [{"id": i, "name": rng.choice(words), "tags": rng.sample(words, 5),
            "score": rng.random(), "text": " ".join(rng.choices(words, k=20))}
           for i in range(5000)]
word = re.compile(r"\b[a-z]{3,6}\b")
counts = {}
for _ in range(rounds):
    doc = json.loads(json.dumps(records))
    for rec in doc:
        for w in word.findall(rec["text"]):
            counts[w] = counts.get(w, 0) + 1
print(len(counts), sum(counts.values()))
