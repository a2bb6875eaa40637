"""Generates the gRPC stubs from ../proto/dynamix.proto with protoc at build time."""
import pathlib
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = pathlib.Path(__file__).resolve().parent
PROTO = HERE.parent / "proto" / "dynamix.proto"


class BuildWithStubs(build_py):
    def run(self):
        super().run()
        target = pathlib.Path(self.build_lib) / "dynamix_worker" / "_generated"
        target.mkdir(parents=True, exist_ok=True)
        plugin = shutil.which("grpc_python_plugin")
        if plugin is None or shutil.which("protoc") is None:
            raise SystemExit("dynamix-worker: protoc and grpc_python_plugin are needed "
                             "(Debian: protobuf-compiler-grpc)")
        subprocess.run(["protoc", f"--proto_path={PROTO.parent}", f"--python_out={target}",
                        f"--grpc_python_out={target}", f"--plugin=protoc-gen-grpc_python={plugin}",
                        str(PROTO)], check=True)


setup(cmdclass={"build_py": BuildWithStubs})
