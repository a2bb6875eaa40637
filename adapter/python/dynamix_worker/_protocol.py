"""The generated protocol stubs: installed with the package, or from a meson build directory
(DYNAMIX_PROTO_PYTHON, the folder holding dynamix_pb2.py) when running from the source tree."""
import importlib
import os
import pathlib
import sys


def _stub_folder():
    given = os.environ.get("DYNAMIX_PROTO_PYTHON")
    if given:
        return pathlib.Path(given)
    return pathlib.Path(__file__).resolve().parent / "_generated"


def load():
    """Returns (dynamix_pb2, dynamix_pb2_grpc)."""
    folder = str(_stub_folder())
    if not (pathlib.Path(folder) / "dynamix_pb2.py").exists():
        raise ImportError(f"dynamix_worker: no generated stubs in {folder}: install the package "
                          "(pip install ./adapter/python) or set DYNAMIX_PROTO_PYTHON to "
                          "BUILD/adapter/proto")
    # protoc's grpc stubs import their messages as a top-level module.
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return importlib.import_module("dynamix_pb2"), importlib.import_module("dynamix_pb2_grpc")
