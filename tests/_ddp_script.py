"""Run under `torchrun --nproc_per_node 2`: the tiny model with the same global batches as a 1-process run.

usage: _ddp_script.py RUN_DIR CONFIG_OVERRIDES_JSON
"""

import json
import sys

import torch.distributed as dist

import _tiny
from hanzilm.train import train

run_dir, overrides = sys.argv[1], json.loads(sys.argv[2])
result = train(_tiny.build(), _tiny.cfg(**overrides), _tiny.batches(batch_size=16), _tiny.evaluate, run_dir)
assert dist.is_initialized() and dist.get_world_size() == 2
print(f"rank {dist.get_rank()}: {result.steps} steps, best step {result.best_step}")
