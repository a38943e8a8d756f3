"""Fetch one pinned file (a source distribution, or a wheel) from the Python package index pip
is set up to use, check its sha256, and unpack the listed members into a directory.

The index comes from pip's own configuration (PIP_INDEX_URL, pip.conf, or pip's built-in
default), so nothing here names a host. The index is asked through the JSON form of the
"simple" repository API (PEP 691 JSON or PEP 503 HTML).

Usage: fetch_sdist.py PROJECT FILENAME SHA256 OUTDIR PREFIX [PREFIX ...]
  Unpacks every archive member whose path (after the top directory) starts with a PREFIX.
  A wheel (.whl) is a zip: its top directory is its package's folder.
"""
import hashlib
import html.parser
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
import urllib.parse
import urllib.request


def index_url():
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"]
    # pip is asked in a process of its own, without the paths a build backend runs with: under
    # pip's build isolation (pip install ./viewer) this interpreter cannot import its own pip.
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONHOME")}
    asks = ([sys.executable, "-m", "pip", "config", "get", "global.index-url"],
            [sys.executable, "-c",
             "from pip._internal.models.index import PyPI; print(PyPI.simple_url)"])
    for ask in asks:  # pip's configuration, else pip's built-in default
        try:
            out = subprocess.run(ask, capture_output=True, text=True, check=False, env=env)
        except OSError:
            continue
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    sys.exit("fetch_sdist: no pip to ask for the package index (set PIP_INDEX_URL)")


class _Anchors(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []
        self._href = None

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._href = dict(attrs).get("href")

    def handle_data(self, data):
        if self._href is not None:
            self.links.append((self._href, data))
            self._href = None


def find_file(project, filename):
    base = index_url().rstrip("/") + "/"
    url = urllib.parse.urljoin(base, project + "/")
    req = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    cafile = os.environ.get("PIP_CERT")
    ctx = None
    if cafile:
        import ssl
        ctx = ssl.create_default_context(cafile=cafile)
    with urllib.request.urlopen(req, timeout=120, context=ctx) as resp:
        kind = resp.headers.get("Content-Type", "")
        body = resp.read()
    if "json" in kind:
        for f in json.loads(body).get("files", []):
            if f.get("filename") == filename:
                return urllib.parse.urljoin(url, f["url"]), ctx
    else:  # the HTML form of the same API (PEP 503): one anchor per file
        parser = _Anchors()
        parser.feed(body.decode("utf-8", "replace"))
        for href, text in parser.links:
            if text.strip() == filename:
                return urllib.parse.urljoin(url, href), ctx
    sys.exit(f"fetch_sdist: {filename} is not in the index listing of {project}")


def members(archive):
    """(path after the top directory, a function that opens it) for each regular file."""
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as z:
            for info in z.infolist():
                parts = info.filename.split("/", 1)
                if len(parts) == 2 and not info.is_dir():
                    yield parts[1], lambda info=info: z.open(info)
        return
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/", 1)
            if len(parts) == 2 and member.isfile():
                yield parts[1], lambda member=member: tar.extractfile(member)


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    project, filename, sha256, outdir, *prefixes = sys.argv[1:]
    out = pathlib.Path(outdir)
    stamp = out / ".fetched"
    # The stamp names the archive and the members asked for: asking for more fetches again.
    wanted = " ".join([sha256, *prefixes])
    if stamp.exists() and stamp.read_text().strip() == wanted:
        return
    url, ctx = find_file(project, filename)
    with tempfile.TemporaryDirectory() as tmp:
        archive = pathlib.Path(tmp) / filename
        with urllib.request.urlopen(url, timeout=600, context=ctx) as resp, open(archive, "wb") as f:
            shutil.copyfileobj(resp, f)
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        if digest != sha256:
            sys.exit(f"fetch_sdist: sha256 of {filename} is {digest}, expected {sha256}")
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        count = 0
        for rel, read in members(archive):
            if any(rel.startswith(p) for p in prefixes):
                target = out / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                with read() as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                count += 1
        if count == 0:
            sys.exit(f"fetch_sdist: no member of {filename} matched {prefixes}")
    stamp.write_text(wanted + "\n")
    print(f"fetch_sdist: unpacked {count} files of {filename} into {out}")


if __name__ == "__main__":
    main()
