"""dynamix.export_policy: a policy trained in Python written as a policy.pt that `dynamix
evaluate`, `sweep`, `simulate` and `serve` load (the format of docs/ppo.md, "The exported
policy"; the contract in docs/python.md, "Your own policy in")."""
import copy
import io
import math
import os
import pathlib
import secrets
import tempfile

import numpy as np

from . import _dynamix

DEFAULT_CLIP = 10.0  # PpoOptions::observation_clip, the C++ trainer's
_CHECK_ROWS = (1, 3, 8)  # the loader's own check runs one row; clusters run many


def export_policy(model, obs_mean, obs_std, path, *, env, clip=DEFAULT_CLIP):
    """Writes `model` as a policy.pt for the environment `env` it was trained on.

    model: a torch.nn.Module (or TorchScript module) mapping normalized observations, a float32
        tensor [workers, features] (one row per worker of the cluster, all of them in one call;
        features = len(env.feature_names), in that order), to action logits, float32
        [workers, actions] (actions = len(env.batch_changes); column j is batch change j). It is
        compiled with torch.jit.script, or torch.jit.trace when scripting fails; a copy is
        exported on the CPU in eval mode, the model itself is left as it is. A network dynamix
        knows (an nn.Sequential, nested ones included, of Linear layers with Tanh between them,
        as PPO's and SB3's actors are) is written as `dynamix export` writes its own policies:
        its weights in dynamix's code, which every loader accepts as it is. Any other model's
        own code goes into the file, and dynamix runs it only when its SHA-256 is named
        (ppo:PATH@trust:HEX, --trust-policy-code HEX).
    obs_mean, obs_std: the normalization the model was trained behind, [features] each (numpy,
        torch or a list): the policy computes clamp((obs - obs_mean) / obs_std, -clip, clip)
        from the raw observation and passes that to the model. obs_std must be > 0.
    path: the file to write (its folder is made if missing); written beside it and renamed
        into place, so a reader never sees half a file.
    env: dynamix.make_env's or make_vector_env's environment, which supplies what the loaders
        check: the observation schema, the action set and base, the batch bounds and the
        decision interval.
    clip: the normalized observations' bound, > 0 (the C++ trainer's is 10).

    Returns the path written (a pathlib.Path). Raises TypeError for a model that cannot be
    compiled or gives something other than a float32 tensor, ValueError for statistics of the
    wrong shape or not finite, a model that fails on [workers, features] or gives a wrong
    number of logits, or a file the loader would refuse.
    """
    import torch  # here, so that `import dynamix` needs no torch

    from ._policy_module import PolicyModule

    files = _env_policy_files(env)
    path = _target(path)
    metadata = _dynamix.read_policy_files(files, str(path))
    features, actions = metadata["features"], len(metadata["actions"])
    mean = _statistic("obs_mean", obs_mean, features, positive=False)
    std = _statistic("obs_std", obs_std, features, positive=True)
    clip = _clip(clip)
    eager = _eager(model, torch)
    reference = PolicyModule(eager, torch.from_numpy(mean), torch.from_numpy(std), clip)
    layers = _dense_layers(eager, features, actions, torch)
    if layers is not None:  # dynamix's own code: nothing of the model's to compile
        archive = _dense_archive(layers, mean, std, clip, files)
        _check_outputs(_read_back(archive, files, path, torch), reference, mean, std, actions,
                       torch)
        _write_atomically(path, archive)
        return path
    compiled = _compiled(eager, features, torch)
    policy = PolicyModule(compiled, torch.from_numpy(mean), torch.from_numpy(std), clip)
    try:
        scripted = torch.jit.script(policy)
    except Exception as error:  # TorchScript's frontend raises several unrelated types
        raise TypeError(f"model: its forward must take and return one Tensor "
                        f"({_line(error)})") from None
    scripted.eval()
    _check_outputs(scripted, reference, mean, std, actions, torch)
    archive = _archive(scripted, files, path, torch)
    _write_atomically(path, archive)
    return path


def _env_policy_files(env):
    native = getattr(env, "_env", None) or getattr(env, "_vector", None)
    if native is None or not hasattr(native, "policy_files"):
        raise TypeError("env: expected the environment the policy was trained on "
                        f"(dynamix.make_env or make_vector_env), found {type(env).__name__}")
    return native.policy_files()


def _target(path):
    path = pathlib.Path(os.fspath(path))
    if path.is_dir():
        raise IsADirectoryError(f"path: {str(path)!r} is a folder; expected a file name such as "
                                f"{str(path / 'policy.pt')!r}")
    return path


def _statistic(name, values, features, positive):
    if hasattr(values, "detach"):  # a torch tensor, possibly on a GPU
        values = values.detach().cpu().numpy()
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name}: expected {features} numbers, found {type(values).__name__} "
                        f"({error})") from None
    if array.shape != (features,):
        raise ValueError(f"{name}: expected shape ({features},), one value per feature of the "
                         f"environment's observation, found shape {array.shape}")
    with np.errstate(over="ignore"):  # an overflow is reported below, naming the value
        single = array.astype(np.float32)
    for i, (value, stored) in enumerate(zip(array, single)):
        if not math.isfinite(value) or not math.isfinite(stored):
            raise ValueError(f"{name}[{i}]: expected a finite float32, found {value!r}")
        if positive and not stored > 0:
            raise ValueError(f"{name}[{i}]: expected a standard deviation > 0 (in float32), "
                             f"found {value!r}")
    return single


def _clip(clip):
    try:
        value = float(clip)
    except (TypeError, ValueError):
        raise TypeError(f"clip: expected a number, found {type(clip).__name__}") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"clip: expected a finite number > 0, found {clip!r}")
    return value


def _eager(model, torch):
    """A copy of model on the CPU in eval mode (the model itself is left as it is)."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, found {type(model).__name__}")
    return copy.deepcopy(model).cpu().eval()


def _compiled(eager, features, torch):
    """A TorchScript form of the eager copy: scripted, else traced."""
    if isinstance(eager, torch.jit.ScriptModule):
        return eager
    try:
        return torch.jit.script(eager)
    except Exception as script_error:  # TorchScript's frontend raises several unrelated types
        example = torch.randn(_CHECK_ROWS[-1], features).clamp(-3, 3)
        try:
            with torch.no_grad():
                return torch.jit.trace(eager, example, check_trace=False)
        except Exception as trace_error:
            raise TypeError(f"model: neither torch.jit.script ({_line(script_error)}) nor "
                            f"torch.jit.trace ({_line(trace_error)}) compiles it") from None


def _dense_layers(model, features, actions, torch):
    """[(weight float32 [out, in], bias float32 [out]), ...] when `model` is a network dynamix
    knows: nn.Sequential (nested ones flattened) of Linear layers with Tanh between them, from
    the features to one logit per action, within the loader's size limits; None otherwise (its
    code then goes into the file)."""
    try:
        from . import _policy_writer
    except ImportError:  # a build without LibTorch writes the model's own code
        return None
    modules = _flattened(model, torch)
    if modules is None or len(modules) % 2 == 0:
        return None
    layers = []
    for i, module in enumerate(modules):
        expected = torch.nn.Linear if i % 2 == 0 else torch.nn.Tanh
        if type(module) is not expected:
            return None
        if expected is torch.nn.Linear:
            weight = module.weight.detach().to(torch.float32).numpy()
            bias = (module.bias.detach().to(torch.float32).numpy() if module.bias is not None
                    else np.zeros(weight.shape[0], dtype=np.float32))
            layers.append((weight, bias))
    sizes = [features] + [weight.shape[0] for weight, _ in layers]
    if (any(weight.shape[1] != sizes[i] for i, (weight, _) in enumerate(layers))
            or sizes[-1] != actions or len(layers) > _policy_writer.max_layers
            or max(sizes[1:]) > _policy_writer.max_units
            or sum(w.size + b.size for w, b in layers) > _policy_writer.max_parameters):
        return None
    return layers


def _flattened(model, torch):
    """The modules of a (nested) nn.Sequential in order; None for any other model."""
    if type(model) is not torch.nn.Sequential:
        return None
    modules = []
    for child in model:
        if type(child) is torch.nn.Sequential:
            inner = _flattened(child, torch)
            if inner is None:
                return None
            modules += inner
        else:
            modules.append(child)
    return modules


def _dense_archive(layers, mean, std, clip, files):
    """The bytes `dynamix export` writes for `layers` behind the normalization."""
    from . import _policy_writer

    with tempfile.TemporaryDirectory(prefix="dynamix-export-") as folder:
        staged = pathlib.Path(folder) / "policy.pt"
        _policy_writer.write_dense_policy(
            files, mean.tolist(), std.tolist(), clip,
            [(w.ravel().tolist(), w.shape[0], w.shape[1], b.tolist()) for w, b in layers],
            str(staged))
        return staged.read_bytes()


def _read_back(archive, files, path, torch):
    """The module in `archive`, loaded as the loader loads it, its metadata read as it reads it."""
    extra = dict.fromkeys(files, "")
    loaded = torch.jit.load(io.BytesIO(archive), _extra_files=extra)
    _dynamix.read_policy_files({k: v.decode() for k, v in extra.items()}, str(path))
    for name in ("observation_mean", "observation_std"):
        if not hasattr(loaded, name):
            raise ValueError(f"policy.pt: the module lost its {name} buffer when saved")
    return loaded


def _check_outputs(scripted, reference, mean, std, actions, torch):
    """What the loaders check (a row of zeros gives one finite logit per action), for several
    worker counts, and the compiled model agreeing with the model."""
    generator = torch.Generator().manual_seed(0)
    for rows in _CHECK_ROWS:
        spread = torch.randn(rows, mean.size, generator=generator)
        obs = torch.from_numpy(mean) + spread * torch.from_numpy(std)
        for inputs in (obs, torch.zeros(rows, mean.size)):
            with torch.no_grad():
                try:
                    logits = scripted(inputs)
                    expected = reference(inputs)
                except Exception as error:
                    raise ValueError(f"model: fails on a float32 [{rows}, {mean.size}] batch, "
                                     f"{mean.size} = len(env.feature_names) ({_line(error)})"
                                     ) from None
            _check_logits(logits, rows, actions, torch)
            if not torch.allclose(logits, expected, rtol=1e-4, atol=1e-5):
                raise ValueError(f"model: its compiled form gives other logits than the model "
                                 f"on {rows} workers (a traced model whose forward depends on "
                                 "its input's values or shape? make it scriptable)")
        greedy = scripted.act(obs)
        if list(greedy.shape) != [rows]:
            raise ValueError(f"model: act() gives shape {list(greedy.shape)} for {rows} workers")


def _check_logits(logits, rows, actions, torch):
    if not isinstance(logits, torch.Tensor):
        raise TypeError(f"model: expected a tensor of logits, found {type(logits).__name__}")
    if logits.dtype != torch.float32:
        raise TypeError(f"model: expected float32 logits, found {logits.dtype}")
    if list(logits.shape) != [rows, actions]:
        raise ValueError(f"model: expected logits of shape [{rows}, {actions}] (workers x the "
                         f"environment's {actions} actions), found {list(logits.shape)}")
    if not torch.isfinite(logits).all():
        bad = int((~torch.isfinite(logits)).sum())
        raise ValueError(f"model: expected finite logits, found {bad} NaN or infinite of "
                         f"{logits.numel()} on {rows} workers")


def _archive(scripted, files, path, torch):
    """The archive's bytes, read back as the loader reads them."""
    buffer = io.BytesIO()
    torch.jit.save(scripted, buffer, _extra_files=files)
    archive = buffer.getvalue()
    if len(archive) > _dynamix.max_policy_bytes:
        raise ValueError(f"model: its policy.pt would take {len(archive)} bytes; the loader "
                         f"reads at most {_dynamix.max_policy_bytes}")
    _read_back(archive, files, path, torch)
    return archive


def _write_atomically(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        descriptor = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        with os.fdopen(descriptor, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(staged, path)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def _line(error):
    """The first line of an exception's message, for a one-line error."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if lines and lines[0].startswith("The following operation failed"):
        return lines[-1]  # TorchScript's interpreter puts the cause last, typed, after a traceback
    return f"{type(error).__name__}: {lines[0] if lines else ''}"
