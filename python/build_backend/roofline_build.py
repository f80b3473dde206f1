"""roofline_build.py - a PEP 517 build backend in the standard library alone.

pip calls build_wheel (and build_sdist, for an sdist) with no package
installed for the build, so `pip install ./python` needs no network. The
wheel holds the package's modules and, when one is found, the command
line's shared library beside them:

  1. the file named by the environment variable ROOFLINE_CLI_LIB;
  2. the library a default build left in ../build/cli/ (`make`);
  3. none: the package then looks for it at run time (ROOFLINE_CLI_LIB,
     then the system's library path, where `make install` puts it).

A wheel with the library is tagged for this platform (py3-none-<platform>),
one without it py3-none-any.
"""
import base64
import hashlib
import io
import os
import re
import sysconfig
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # python/
NAME = "roofline"
LIB = "libroofline-cli.so"


def _version():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    return re.search(r'^version\s*=\s*"([^"]+)"', text, re.M).group(1)


def _library():
    """The shared library to bundle, or None."""
    named = os.environ.get("ROOFLINE_CLI_LIB")
    if named:
        path = Path(named)
        if not path.is_absolute():  # pip runs this in the package's folder
            path = Path(os.environ.get("PWD", ".")) / path
        if not path.is_file():
            raise FileNotFoundError(f"ROOFLINE_CLI_LIB={named}: no such file")
        return path.resolve()
    built = ROOT.parent / "build" / "cli" / LIB
    return built.resolve() if built.is_file() else None


def _modules():
    return sorted(p for p in (ROOT / NAME).glob("*.py"))


def _metadata(version):
    readme = (ROOT / "README.md").read_text(encoding="utf-8") if (ROOT / "README.md").is_file() else ""
    head = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {version}",
        "Summary: Operator rooflines for transformer inference: the roofline command line from Python",
        "Requires-Python: >=3.8",
        "Provides-Extra: pandas",
        "Requires-Dist: pandas; extra == 'pandas'",
    ]
    if readme:
        head.append("Description-Content-Type: text/markdown")
        return "\n".join(head) + "\n\n" + readme
    return "\n".join(head) + "\n"


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    lib = _library()
    tag = "py3-none-" + (re.sub(r"[-.]", "_", sysconfig.get_platform()) if lib else "any")
    dist_info = f"{NAME}-{version}.dist-info"
    files = [(f"{NAME}/{p.name}", p.read_bytes()) for p in _modules()]
    if lib:
        files.append((f"{NAME}/{LIB}", lib.read_bytes()))
    files.append((f"{dist_info}/METADATA", _metadata(version).encode()))
    files.append((f"{dist_info}/WHEEL", (
        "Wheel-Version: 1.0\nGenerator: roofline_build\n"
        f"Root-Is-Purelib: {'false' if lib else 'true'}\nTag: {tag}\n").encode()))
    record = [_record_line(n, d) for n, d in files] + [f"{dist_info}/RECORD,,"]
    files.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    wheel = f"{NAME}-{version}-{tag}.whl"
    with zipfile.ZipFile(Path(wheel_directory) / wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return wheel


def build_sdist(sdist_directory, config_settings=None):
    version = _version()
    base = f"{NAME}-{version}"
    name = f"{base}.tar.gz"
    keep = ["pyproject.toml", "README.md", "build_backend/roofline_build.py"]
    keep += [f"{NAME}/{p.name}" for p in _modules()]
    keep += [str(p.relative_to(ROOT)) for p in sorted((ROOT / "tests").glob("*.py"))]
    with tarfile.open(Path(sdist_directory) / name, "w:gz") as t:
        for rel in keep:
            path = ROOT / rel
            if path.is_file():
                t.add(path, arcname=f"{base}/{rel}")
        pkg_info = _metadata(version).encode()
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        t.addfile(info, io.BytesIO(pkg_info))
    return name
