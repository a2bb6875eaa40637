#!/usr/bin/env bash
# stable-baselines3's PPO on dynamix, from a clean clone: installs what is missing, builds what
# it runs (the two executables and the Python module), pins SB3 into .venv-sb3 beside Debian's
# torch and numpy, then trains, exports and evaluates (examples/python/sb3_ppo.py, which takes
# the extra arguments, e.g. --timesteps 8192 --scenario hetero32).
set -euo pipefail
ext_suffix=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
build_targets=(apps/dynamix apps/dynamix-torch "python/dynamix/_dynamix$ext_suffix")
with_sb3=1
source "$(dirname "$0")/setup.sh"
if [[ ! -x .venv-sb3/bin/python3 ]] || ! .venv-sb3/bin/python3 -c 'import stable_baselines3' 2>/dev/null; then
  echo "dynamix: stable-baselines3 is not installed in .venv-sb3 (see the message above)" >&2
  exit 2
fi
PYTHONPATH=build/python exec .venv-sb3/bin/python3 examples/python/sb3_ppo.py "$@"
