"""Loads dynamix policy.pt files with torch.jit.load and writes their logits and greedy actions.

usage: check_policy.py POLICY OBSERVATIONS OUTPUT [POLICY OBSERVATIONS OUTPUT ...]
OBSERVATIONS: one row per worker, features as float.hex(); OUTPUT: "actions ...", the action
set, action base and decision interval from the extra files, then one row of hex logits per worker.
Several policies share one process, as importing torch takes about a CPU-second.
"""
import json
import sys

import torch


def check(policy_path, observations_path, output_path):
    extra_files = {name: "" for name in
                   ("schema.json", "actions.json", "action_base", "bounds.json",
                    "decision_interval", "version")}
    module = torch.jit.load(policy_path, _extra_files=extra_files)
    with open(observations_path) as rows:
        observations = torch.tensor([[float.fromhex(v) for v in line.split()] for line in rows
                                     if line.strip()], dtype=torch.float32)
    with torch.no_grad():
        logits = module(observations)
        actions = module.act(observations)

    def text(name):
        content = extra_files[name]
        return content.decode() if isinstance(content, bytes) else content

    json.loads(text("schema.json"))
    with open(output_path, "w") as out:
        out.write("actions " + " ".join(str(int(a)) for a in actions) + "\n")
        out.write("action_set " + " ".join(str(a) for a in json.loads(text("actions.json"))) + "\n")
        out.write("action_base " + text("action_base").strip() + "\n")
        out.write("decision_interval " + text("decision_interval").strip() + "\n")
        for row in logits.tolist():
            out.write(" ".join(float(x).hex() for x in row) + "\n")


torch.set_num_threads(1)
arguments = sys.argv[1:]
if not arguments or len(arguments) % 3 != 0:
    sys.exit(__doc__)
for first in range(0, len(arguments), 3):
    check(*arguments[first:first + 3])
