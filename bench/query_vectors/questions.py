# Usage: questions.py N > qcorpus.txt (after corpus.py)
# Question-shaped lines from corpus spans: the shapes developers ask memory in.
import random, sys
random.seed(11)
lines = open("corpus.txt").read().split("\n")[:-1]
sents = [l for l in lines if len(l.split()) >= 6]
shapes = ["What is {}?", "How do I {}?", "Why does {} fail?", "Where is {} defined?", "Which {} do we use?",
          "Why did {} break?", "How does {} work?", "What did we decide about {}?", "Have we seen {} before?",
          "what was the fix for {}", "{} not working", "when should {} be used?", "Why is {} slow?",
          "What changed in {}?", "How to configure {}?", "what happened with {}", "Is {} safe?", "{}?"]
out = []
for i in range(int(sys.argv[1])):
    w = random.choice(sents).rstrip(".").split()
    k = random.choice([1, 2, 2, 3, 3, 4, 5])
    j = random.randrange(0, len(w) - k + 1)
    span = " ".join(w[j:j + k])
    if random.random() < 0.5: span = span.lower()
    out.append(random.choice(shapes).format(span))
print("\n".join(out))
