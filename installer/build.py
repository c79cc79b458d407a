"""Build the offline bundle: ``python installer/build.py``.

Steps:

1. run PyInstaller on ``installer/microagg.spec`` (a one-folder bundle with the windowed
   ``microagg-desktop`` and the console ``microagg`` launchers);
2. strip the interpreter's debug symbols (Linux only);
3. write into the bundle folder a bill of materials (``BILL_OF_MATERIALS.csv``: every
   bundled Python distribution with its version and licence), a third-party licence
   notice (``THIRD_PARTY_LICENSES.txt``), the application's licence (``LICENSE.txt``)
   and ``SHA256SUMS`` (every file of the folder);
4. archive the folder (``.zip`` on Windows, ``.tar.gz`` elsewhere) and write
   ``SHA256SUMS`` for the archive beside it;
5. print the sizes and the time taken.

Run it with the Python of an environment where the application and PyInstaller are
installed (``pip install -e . pyinstaller``); the bill of materials describes that
environment, restricted to what PyInstaller actually bundled. Options: ``--dist DIR``
(default ``installer/dist``), ``--work DIR`` (default ``installer/build``), ``--clean``
(discard PyInstaller's cache), ``--no-archive``.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import importlib.metadata as metadata
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from microagg_desktop.about import licence_of  # the About dialog reads licences the same way

__all__ = [
    "Package", "bundled_packages", "strip_interpreter", "write_bill_of_materials", "write_licence_notice",
    "write_checksums", "verify_checksums", "make_archive", "folder_size", "main",
]

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SPEC = HERE / "microagg.spec"
BUNDLE_NAME = "microagg"  # COLLECT's name in the spec
APP_DISTRIBUTION = "microagg-desktop"
APP_PACKAGES = ("core", "microagg_desktop")
BOM_NAME, NOTICE_NAME, SUMS_NAME = "BILL_OF_MATERIALS.csv", "THIRD_PARTY_LICENSES.txt", \
    "SHA256SUMS"
# Licence texts the wheels do not carry: Qt for Python ships none, and the project's own
# licence is the GPL.
EXTRA_LICENCE_TEXTS = {
    "PySide6_Essentials": ("LGPL-3.0.txt", "GPL-3.0.txt"),
    "shiboken6": ("LGPL-3.0.txt",),
    APP_DISTRIBUTION: ("GPL-3.0.txt",),
}
_LICENCE_FILE = re.compile(r"(LICEN[CS]E|COPYING|NOTICE)", re.IGNORECASE)


@dataclass
class Package:
    """One bundled distribution (or Python itself) as listed in the bill of materials."""

    name: str
    version: str
    licence: str
    modules: tuple[str, ...]
    licence_texts: list[tuple[str, str]] = field(default_factory=list)  # (file, text)


# -- what got bundled ---------------------------------------------------------------------


def _top_level_of(distribution: metadata.Distribution) -> set[str]:
    """First path component of every file of ``distribution``, as the spec records them."""
    names = set()
    for file in distribution.files or ():
        first = file.parts[0] if file.parts else ""
        if not first or first.endswith((".dist-info", ".egg-info", ".data")) or \
                first in ("..", "__pycache__", "bin", "Scripts"):
            continue
        names.add(first.split(".")[0])
    return names


def _licence_texts(distribution: metadata.Distribution) -> list[tuple[str, str]]:
    """The licence files a distribution carries (PEP 639 ``License-File`` or by name)."""
    texts, seen = [], set()
    declared = distribution.metadata.get_all("License-File") or []
    for name in declared:
        for candidate in (f"licenses/{name}", name):
            text = distribution.read_text(candidate)
            if text is not None:
                texts.append((name, text))
                seen.add(name)
                break
    for file in distribution.files or ():
        in_metadata = file.parts and file.parts[0].endswith(".dist-info")
        if in_metadata and _LICENCE_FILE.search(file.name) and file.name not in seen and \
                "licenses" not in file.parts:
            try:
                texts.append((file.name, file.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError):
                continue
            seen.add(file.name)
    if not texts:
        short = (distribution.metadata.get("License") or "").strip()
        if "\n" in short:  # the whole licence in the metadata field (scipy, matplotlib)
            texts.append(("License (metadata)", short))
    return texts


def _extra_texts(name: str) -> list[tuple[str, str]]:
    return [(file, (HERE / "licenses" / file).read_text(encoding="utf-8"))
            for file in EXTRA_LICENCE_TEXTS.get(name, ())]


def _app_version() -> str:
    try:
        return metadata.version(APP_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        import tomllib

        with open(REPO / "pyproject.toml", "rb") as handle:
            return tomllib.load(handle)["project"]["version"]


def bundled_packages(top_level: Iterable[str]) -> list[Package]:
    """The distributions of the build environment that provide the bundled modules.

    Parameters
    ----------
    top_level : iterable of str
        Top-level import names (and folder names, e.g. ``numpy.libs`` → ``numpy``) of
        what PyInstaller collected; the spec writes them to ``bundled_top_level.json``.

    Returns
    -------
    list of Package
        Python itself first (the standard library and the interpreter), then this
        application, then every third-party distribution in name order.
    """
    wanted = set(top_level)
    python_licence = Path(sys.base_prefix) / "lib" / f"python{sys.version_info[0]}." \
        f"{sys.version_info[1]}" / "LICENSE.txt"
    if not python_licence.is_file():  # Windows layout
        python_licence = Path(sys.base_prefix) / "LICENSE.txt"
    packages = [Package(
        "Python", platform.python_version(), "PSF-2.0", ("(interpreter and standard library)",),
        [("LICENSE.txt", python_licence.read_text(encoding="utf-8"))]
        if python_licence.is_file() else [])]
    app_modules = tuple(sorted(wanted & set(APP_PACKAGES)))
    if app_modules:
        packages.append(Package(APP_DISTRIBUTION, _app_version(), "GPL-3.0-or-later",
                                app_modules, _extra_texts(APP_DISTRIBUTION)))
    third_party = {}
    for distribution in metadata.distributions():
        name = distribution.metadata["Name"]
        if not name or name in third_party or name.lower() == APP_DISTRIBUTION:
            continue
        provided = _top_level_of(distribution) & wanted
        if provided:
            third_party[name] = Package(
                name, distribution.version, licence_of(distribution),
                tuple(sorted(provided)),
                _licence_texts(distribution) + _extra_texts(name))
    packages += [third_party[name] for name in sorted(third_party, key=str.lower)]
    return packages


# -- the documents ------------------------------------------------------------------------


def write_bill_of_materials(packages: Iterable[Package], path: str | os.PathLike) -> Path:
    """A CSV with one row per package: name, version, licence, bundled modules."""
    path = Path(path)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["name", "version", "licence", "bundled modules"])
        for package in packages:
            writer.writerow([package.name, package.version, package.licence,
                             " ".join(package.modules)])
    return path


def write_licence_notice(packages: Iterable[Package], path: str | os.PathLike) -> Path:
    """Every package's licence identifier followed by the licence texts it carries."""
    rule = "=" * 78
    parts = ["MicroAgg Desktop: third-party software in this bundle and its licences.",
             "The list with versions is in " + BOM_NAME + ".", ""]
    for package in packages:
        parts += [rule, f"{package.name} {package.version}", f"Licence: {package.licence}",
                  rule, ""]
        if not package.licence_texts:
            parts += ["(The distribution carries no licence file; see its licence "
                      "identifier above.)", ""]
        for file, text in package.licence_texts:
            parts += [f"--- {file} ---", text.rstrip(), ""]
    path = Path(path)
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_checksums(folder: str | os.PathLike, path: str | os.PathLike | None = None, *,
                    files: Iterable[str | os.PathLike] | None = None) -> Path:
    """Write ``sha256sum``-compatible lines (``<hex>  <relative/posix/path>``).

    Every regular file under ``folder`` is listed (except the output itself), or just
    ``files`` (paths relative to ``folder``) if given. ``path`` defaults to
    ``folder/SHA256SUMS``. Symbolic links are not followed; their targets are listed
    where they lie.
    """
    folder = Path(folder)
    path = Path(path) if path is not None else folder / SUMS_NAME
    if files is None:
        files = sorted(p.relative_to(folder) for p in folder.rglob("*")
                       if p.is_file() and not p.is_symlink() and p.resolve() != path.resolve())
    lines = [f"{_sha256(folder / name)}  {Path(name).as_posix()}" for name in files]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def verify_checksums(folder: str | os.PathLike, path: str | os.PathLike | None = None
                     ) -> list[str]:
    """The files whose checksum differs from ``SHA256SUMS`` (or that are missing)."""
    folder = Path(folder)
    path = Path(path) if path is not None else folder / SUMS_NAME
    bad = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        expected, name = line.split("  ", 1)
        target = folder / name
        if not target.is_file() or _sha256(target) != expected:
            bad.append(name)
    return bad


def make_archive(folder: str | os.PathLike, archive_stem: str | os.PathLike, *,
                 root_name: str | None = None, kind: str | None = None) -> Path:
    """Archive ``folder`` as ``archive_stem.zip`` (Windows) or ``.tar.gz`` (elsewhere).

    The archive holds one top folder, ``root_name`` (default: the folder's name).
    Symbolic links are kept in a tar archive.
    """
    folder = Path(folder)
    root_name = root_name or folder.name
    kind = kind or ("zip" if sys.platform == "win32" else "gztar")
    if kind == "zip":
        target = Path(f"{archive_stem}.zip")
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
            for file in sorted(folder.rglob("*")):
                if file.is_file():
                    archive.write(file, Path(root_name) / file.relative_to(folder))
        return target
    target = Path(f"{archive_stem}.tar.gz")
    with tarfile.open(target, "w:gz", compresslevel=6) as archive:
        archive.add(folder, arcname=root_name)
    return target


def folder_size(folder: str | os.PathLike) -> int:
    """Bytes in the regular files under ``folder`` (symbolic links not followed)."""
    return sum(p.stat().st_size for p in Path(folder).rglob("*")
               if p.is_file() and not p.is_symlink())


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


# -- the build ----------------------------------------------------------------------------


def _platform_tag() -> str:
    system = {"win32": "windows", "darwin": "macos"}.get(sys.platform, sys.platform)
    machine = platform.machine().lower().replace("amd64", "x86_64")
    return f"{system}-{machine}"


def strip_interpreter(bundle: Path) -> int:
    """Strip debug symbols from the bundled libpython and standard extension modules.

    Only on Linux with ``strip`` installed, and only the interpreter's own files: a
    Python built from source (pyenv) keeps its symbols (libpython alone is 22 MB
    instead of 5 MB), whereas the libraries from wheels are stripped already and some
    of them (auditwheel's ``*.libs``) break when stripped again. Returns bytes saved.
    """
    tool = shutil.which("strip")
    if not sys.platform.startswith("linux") or tool is None:
        return 0
    internal = bundle / "_internal"
    targets = [p for p in internal.glob("libpython*.so*") if p.is_file() and not p.is_symlink()]
    targets += sorted(internal.glob("python3*/lib-dynload/*.so"))
    before = sum(p.stat().st_size for p in targets)
    for target in targets:
        subprocess.run([tool, "--strip-unneeded", str(target)], check=True)
    return before - sum(p.stat().st_size for p in targets)


def run_pyinstaller(dist: Path, work: Path, *, clean: bool) -> None:
    command = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
               "--distpath", str(dist), "--workpath", str(work), str(SPEC)]
    if clean:
        command.insert(3, "--clean")
    print("$ " + " ".join(command), flush=True)
    subprocess.run(command, check=True, cwd=REPO)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dist", type=Path, default=HERE / "dist")
    parser.add_argument("--work", type=Path, default=HERE / "build")
    parser.add_argument("--clean", action="store_true", help="discard PyInstaller's cache")
    parser.add_argument("--no-archive", action="store_true")
    args = parser.parse_args(argv)
    dist, work = args.dist.resolve(), args.work.resolve()

    start = time.monotonic()
    run_pyinstaller(dist, work, clean=args.clean)
    built = time.monotonic()
    bundle = dist / BUNDLE_NAME
    top_level = json.loads((work / SPEC.stem / "bundled_top_level.json").read_text("utf-8"))

    saved = strip_interpreter(bundle)
    if saved:
        print(f"stripped the interpreter's debug symbols: {_mb(saved)} saved")
    packages = bundled_packages(top_level)
    write_bill_of_materials(packages, bundle / BOM_NAME)
    write_licence_notice(packages, bundle / NOTICE_NAME)
    shutil.copyfile(HERE / "licenses" / "GPL-3.0.txt", bundle / "LICENSE.txt")
    write_checksums(bundle)
    print(f"bundle: {bundle} ({_mb(folder_size(bundle))}, {len(packages)} packages in "
          f"{BOM_NAME})")

    if not args.no_archive:
        stem = f"{APP_DISTRIBUTION}-{_app_version()}-{_platform_tag()}"
        archive = make_archive(bundle, dist / stem, root_name=f"{APP_DISTRIBUTION}-"
                               f"{_app_version()}")
        write_checksums(dist, dist / SUMS_NAME, files=[archive.name])
        print(f"archive: {archive} ({_mb(archive.stat().st_size)}); checksum in "
              f"{dist / SUMS_NAME}")
    print(f"time: PyInstaller {built - start:.0f} s, total {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
