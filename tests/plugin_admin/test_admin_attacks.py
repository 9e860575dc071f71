"""`hermes plugins install | update | remove` given a hostile source string or a hostile
plugin: each attack is refused with a message saying what to do, and nothing outside the
expected folders changes. Real git repositories, folders and wheels in tmp_path; HOME and
HERMES_HOME are temporary; pip is offline and installs only into a throw-away virtualenv."""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import zipfile
from pathlib import Path

import pytest
from adminkit import INIT, SECRET, hermes, package_folder, plugin_folder, snapshot
from venvkit import clean_env


@pytest.fixture(autouse=True)
def _fake_home(user_home: Path) -> Path:
    return user_home


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org",
                           "-c", "init.defaultBranch=main", *args], cwd=repo, check=True,
                          capture_output=True, text=True).stdout.strip()


def plugin_repo(root: Path, manifest: str = "name: demo\nversion: 1.0.0\n") -> Path:
    plugin_folder(root, manifest)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "plugin")
    return root


def nothing_installed(home: Path) -> None:
    assert not (home / "plugins.lock").exists()
    assert [p.name for p in (home / "plugins").iterdir()] == []


# --- git: sources and refs that would be options or helper programs ----------------------


def test_git_ref_that_is_an_option_is_refused(home, tmp_path, user_home, cli):
    """`git@host:repo.git@--pathspec-from-file=~/.ssh/key` made `git checkout` read the key and
    print it in its error."""
    repo = plugin_repo(tmp_path / "srv" / "demo.git")
    (user_home / ".gitconfig").write_text(
        f'[url "file://{repo.parent}/"]\n\tinsteadOf = git@example.invalid:\n')
    spec = f"git@example.invalid:demo.git@--pathspec-from-file={user_home / '.ssh' / 'id_ed25519'}"
    code, out, err = cli("plugins", "install", spec, "--no-input")
    assert SECRET not in out + err
    assert code == 1 and "is not a branch, tag or commit" in err and "@v1.2" in err
    nothing_installed(home)
    # the same repository at a normal ref installs
    code, out, err = cli("plugins", "install", "git@example.invalid:demo.git@main", "--no-input")
    assert code == 0, err


@pytest.mark.parametrize("form", ["ext", "dash"])
def test_git_helper_transport_and_option_urls_are_refused(home, tmp_path, user_home, cli, form):
    """`ext::CMD x.git` ran CMD (for a user whose git allows every protocol); a URL starting
    with '-' reached `git clone` as an option."""
    (user_home / ".gitconfig").write_text("[protocol]\n\tallow = always\n")
    marker = tmp_path / "ran.git"
    spec = {"ext": f"ext::touch {marker}", "dash": f"--upload-pack=touch {marker}"}[form]
    code, _, err = cli("plugins", "install", "--no-input", "--", spec)  # after --: not click's
    assert not marker.exists()
    assert code == 1
    assert ("transport::address" if form == "ext" else "starts with '-'") in err
    nothing_installed(home)


def test_local_repository_config_and_hooks_do_not_run(home, tmp_path, cli):
    """Already safe: installing from a local repository clones it; its .git/config
    (core.fsmonitor, filters) and hooks are not run."""
    repo = plugin_repo(tmp_path / "repo")
    marker = tmp_path / "ran"
    command = f"touch {marker}"
    (repo / ".gitattributes").write_text("* filter=evil\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "attributes")
    for key in ("core.fsmonitor", "filter.evil.smudge", "filter.evil.clean", "core.sshCommand"):
        git(repo, "config", key, command)
    for hook in ("post-checkout", "reference-transaction"):
        path = repo / ".git" / "hooks" / hook
        path.write_text(f"#!/bin/sh\n{command}\n")
        path.chmod(0o755)
    code, _, err = cli("plugins", "install", str(repo), "--no-input")
    assert code == 0, err
    assert not marker.exists()



def test_git_url_credentials_are_not_printed(home, cli):
    """Already safe: a token in a git URL is masked in a failed clone's error."""
    spec = "https://user:tok3n-SECRET@127.0.0.1:9/org/repo.git"  # nothing listens on port 9
    code, out, err = cli("plugins", "install", spec, "--no-input")
    assert code == 1 and "git clone https://user:***@127.0.0.1:9/org/repo.git failed" in err
    assert "tok3n-SECRET" not in out + err
    nothing_installed(home)

# --- pip: requirement strings that are options --------------------------------------------


def test_pip_requirement_that_is_an_option_is_refused(home, tmp_path, monkeypatch, cli):
    """`--log=pwned.txt` went to `pip wheel` as an option: pip wrote the file."""
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("plugins", "install", "--no-input", "--", "--log=pwned.txt")
    assert not (tmp_path / "pwned.txt").exists()
    assert code == 1 and "is not a pip requirement" in err and "name==1.2" in err
    nothing_installed(home)


def test_an_sdist_is_not_built_without_allow_build(home, tmp_path, cli):
    """Building an sdist runs its setup.py, before hermes shows anything: refused unless asked."""
    import tarfile

    marker = tmp_path / "setup-code-ran"
    root = tmp_path / "shady-1.0"
    plugin_folder(root / "shady")
    (root / "setup.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n"
                                   "from setuptools import setup\nsetup(name='shady', "
                                   "version='1.0', packages=['shady'])\n")
    (root / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: shady\nVersion: 1.0\n")
    sdist = tmp_path / "shady-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        archive.add(root, arcname="shady-1.0")
    code, _, err = cli("plugins", "install", str(sdist), "--no-input")
    assert code == 1 and "is a source distribution" in err and "--allow-build" in err
    assert not marker.exists()
    nothing_installed(home)


def test_a_package_folder_is_not_built_without_allow_build(home, tmp_path, monkeypatch, cli):
    """A folder with pyproject.toml or setup.py (and no plugin.yaml) was built as it was,
    running its setup.py before hermes showed anything, without --allow-build."""
    monkeypatch.setenv("PIP_NO_BUILD_ISOLATION", "0")  # offline, a build would really run
    marker = tmp_path / "setup-code-ran"
    folder = package_folder(tmp_path / "own", marker, with_manifest=False)
    code, out, err = cli("plugins", "install", str(folder), "--no-input")
    assert not marker.exists()
    assert code == 1 and "is a Python package folder" in err and "--allow-build" in err, err
    assert "runs its own setup code" in err and "copied instead" in err
    assert "Plugin own" not in out
    nothing_installed(home)
    (folder / "setup.py").unlink()  # pyproject.toml alone is built too (its backend runs)
    code, _, err = cli("plugins", "install", str(folder), "--no-input")
    assert code == 1 and "is a Python package folder" in err
    nothing_installed(home)


def test_a_plugin_folder_with_a_setup_py_is_copied_not_built(home, tmp_path, cli):
    """Already so: plugin.yaml at the folder's top makes it a plugin folder; its setup.py is
    copied with it and never run."""
    marker = tmp_path / "setup-code-ran"
    folder = package_folder(tmp_path / "own", marker, with_manifest=True)
    code, out, err = cli("plugins", "install", str(folder), "--no-input")
    assert code == 0 and "(folder " in out, err
    assert not marker.exists()
    assert (home / "plugins" / "own" / "setup.py").is_file()


def test_a_folder_in_the_way_is_reported_not_replaced(home, tmp_path, cli):
    """A stray folder where the plugin would go (no plugin.yaml: not a plugin) is kept."""
    stray = home / "plugins" / "demo"
    stray.mkdir(parents=True)
    (stray / "notes.txt").write_text("mine")
    code, _, err = cli("plugins", "install", str(plugin_folder(tmp_path / "src" / "demo")),
                       "--no-input")
    assert code == 1 and "already exists and is not a plugin" in err
    assert [p.name for p in stray.iterdir()] == ["notes.txt"]
    assert not (home / "plugins.lock").exists()


# --- wheels with hostile metadata (installed, if at all, into a throw-away virtualenv) -----


def make_wheel(out: Path, dist: str, version: str, entry_points: dict[str, str],
               files: dict[str, str], requires: tuple[str, ...] = ()) -> Path:
    """A wheel written by hand, so its metadata can say what no build backend would."""
    info = f"{dist.replace('-', '_')}-{version}.dist-info"
    meta = (f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
            + "".join(f"Requires-Dist: {r}\n" for r in requires))
    eps = "[hermes_agent.plugins]\n" + "".join(f"{k} = {v}\n" for k, v in entry_points.items())
    members = {**files, f"{info}/METADATA": meta, f"{info}/entry_points.txt": eps,
               f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\n"
                                "Tag: py3-none-any\n"}
    record = []
    for name, text in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{name},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{dist.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in {**members, f"{info}/RECORD": "\n".join(record) + "\n"}.items():
            archive.writestr(name, text)
    return wheel


def installed(python: Path, module: str) -> bool:
    code = f"import importlib.util, sys; sys.exit(0 if importlib.util.find_spec({module!r}) else 1)"
    return subprocess.run([str(python), "-c", code], env=clean_env()).returncode == 0


@pytest.mark.parametrize("how", ["absolute", "relative"])
def test_wheel_entry_point_name_that_is_a_path_is_refused(python, tmp_path, home, how):
    """An entry point named /some/folder made the fetch write plugin.yaml there before the user
    was asked; one named ../../victim was installed under that name, and `remove` then deleted
    $HERMES_HOME/plugin-data/../../victim."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("mine")
    name = str(victim) if how == "absolute" else "../../victim"
    package = f"evil_{how}"
    wheel = make_wheel(tmp_path / "dist", f"evil-{how}", "1.0", {name: package},
                       {f"{package}/__init__.py": INIT, f"{package}/plugin.yaml": "name: fine\n"})
    proc = hermes(python, home, "plugins", "install", str(wheel), "--no-input")
    assert sorted(p.name for p in victim.iterdir()) == ["keep.txt"]
    if proc.returncode == 0:  # what happened before: the lock names the path; remove follows it
        hermes(python, home, "plugins", "remove", name, "--no-input")
    assert victim.is_dir() and sorted(p.name for p in victim.iterdir()) == ["keep.txt"]
    assert proc.returncode == 1 and "is not a plugin name" in proc.stderr, proc.stderr
    assert not installed(python, package)
    nothing_installed(home)


@pytest.mark.parametrize("requirement", ["--log={marker}", "-e ."])
def test_wheel_requirement_that_is_an_option_is_refused(python, tmp_path, home, requirement):
    """Already safe: a wheel depending on hermes-agent has its other Requires-Dist installed
    by a second `pip install`, where a line `--log=FILE` would be an option; `pip wheel`
    already fails on such a line, and hermes checks the lines itself too."""
    marker = tmp_path / "pip.log"
    wheel = make_wheel(tmp_path / "dist", "hosted-evil", "1.0", {"hosted": "hosted_evil"},
                       {"hosted_evil/__init__.py": INIT,
                        "hosted_evil/plugin.yaml": "name: hosted\n"},
                       ("hermes-agent>=0.1", requirement.format(marker=marker)))
    proc = hermes(python, home, "plugins", "install", str(wheel), "--no-input")
    assert not marker.exists()
    assert proc.returncode == 1 and "Requires-Dist" in proc.stderr or "Parse error" in proc.stderr
    assert not installed(python, "hosted_evil")
    nothing_installed(home)


def test_wheel_distribution_name_that_is_an_option_is_refused(python, tmp_path, home):
    """The distribution name goes to `pip uninstall` on remove and on a failed install."""
    wheel = make_wheel(tmp_path / "dist", "ok-name", "1.0", {"okname": "ok_name"},
                       {"ok_name/__init__.py": INIT, "ok_name/plugin.yaml": "name: okname\n"})
    bad = tmp_path / "bad" / wheel.name
    bad.parent.mkdir()
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(bad, "w") as target:
        for item in source.namelist():
            data = source.read(item)
            if item.endswith("/METADATA"):
                data = data.replace(b"Name: ok-name", b"Name: -rrequirements.txt")
            target.writestr(item, data)
    proc = hermes(python, home, "plugins", "install", str(bad), "--no-input")
    assert proc.returncode == 1 and "not a distribution name" in proc.stderr, proc.stderr
    assert not installed(python, "ok_name")
    nothing_installed(home)


# --- plugin files: links out of the source, devices, loops ---------------------------------


@pytest.mark.parametrize("kind", ["ssh-key", "hermes-env", "folder", "device", "loop"])
@pytest.mark.parametrize("source", ["git", "folder"])
def test_links_out_of_the_source_are_refused(home, tmp_path, user_home, cli, kind, source):
    """Copying follows links: a link to ~/.ssh/id_ed25519 put the key into the plugin folder,
    one to a folder copied that folder, one to /dev/null copied a device, `loop -> .`
    copied itself over and over."""
    (home / ".env").write_text("OPENAI_API_KEY=sk-mine\n")
    src = plugin_folder(tmp_path / "src" / "demo")
    target = {"ssh-key": user_home / ".ssh" / "id_ed25519", "hermes-env": home / ".env",
              "folder": user_home / ".ssh", "device": Path(os.devnull), "loop": Path(".")}[kind]
    (src / "notes").symlink_to(target)
    if source == "git":
        git(src, "init", "-q")
        git(src, "add", "-A")
        git(src, "commit", "-qm", "plugin with a link")
    before = snapshot(user_home)
    code, out, err = cli("plugins", "install", str(src), "--no-input")
    assert not (home / "plugins" / "demo").exists()
    assert SECRET not in out + err and "sk-mine" not in out + err
    assert code == 1 and "notes" in err
    assert ("outside the source" in err if kind in ("ssh-key", "hermes-env", "folder", "device")
            else "loop" in err)
    assert snapshot(user_home) == before
    nothing_installed(home)


def link_ladder(src: Path, depth: int) -> None:
    """d0 holds two links to d1, d1 two to d2, ...: a few dozen entries that copying (which
    follows links) multiplies to 2**depth folders."""
    for level in range(depth + 1):
        (src / f"d{level}").mkdir()
        (src / f"d{level}" / "f.txt").write_text("x")
        if level < depth:
            for link in "ab":
                (src / f"d{level}" / link).symlink_to(Path("..") / f"d{level + 1}")


def test_links_multiplying_the_copy_are_refused(home, tmp_path, cli):
    """40 links made the copy hold 2**20 folders (a 200-byte repository filled the disk)."""
    src = plugin_folder(tmp_path / "src" / "demo")
    link_ladder(src, 20)
    plugin_repo(src)
    code, _, err = cli("plugins", "install", str(src), "--no-input")
    assert code == 1 and "more than 100000 files and folders" in err
    assert not (home / "plugins" / "demo").exists()
    nothing_installed(home)


def test_links_inside_the_source_still_install(home, tmp_path, cli):
    """A monorepo's plugin may link to a file elsewhere in the same repository."""
    repo = tmp_path / "mono"
    src = plugin_folder(repo / "plugins" / "demo")
    (repo / "LICENSE").write_text("MIT\n")
    (src / "LICENSE").symlink_to(Path("..") / ".." / "LICENSE")
    (src / "data").mkdir()
    (src / "data" / "table.txt").write_text("1\n")
    (src / "table-link").symlink_to(Path("data") / "table.txt")
    plugin_repo(repo, "name: mono-root\n")
    code, _, err = cli("plugins", "install", f"{repo}#subdirectory=plugins/demo", "--no-input")
    assert code == 0, err
    assert (home / "plugins" / "demo" / "LICENSE").read_text() == "MIT\n"
    assert (home / "plugins" / "demo" / "table-link").read_text() == "1\n"


def test_subdirectory_escaping_the_clone_is_refused(home, tmp_path, cli):
    """Already safe: `repo#../elsewhere` and a plugin folder that is a link out are refused."""
    repo = plugin_repo(tmp_path / "repo")
    plugin_folder(tmp_path / "elsewhere", "name: elsewhere\n")
    code, _, err = cli("plugins", "install", f"{repo}#subdirectory=../elsewhere", "--no-input")
    assert code == 1 and "points outside the source" in err
    (repo / "linked").symlink_to(tmp_path / "elsewhere")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "link")
    code, _, err = cli("plugins", "install", f"{repo}#linked", "--no-input")
    assert code == 1 and "points outside the source" in err
    nothing_installed(home)


# --- plugin.yaml: names, env vars and text that fake the consent screen ------------------


@pytest.mark.parametrize("manifest, problem", [
    ('name: "demo\\n"\n', "use letters, digits"),  # the kernel's manifest check
    ('name: demo\nrequires_env: [LD_PRELOAD]\n', "changes how programs run"),
    ('name: demo\nrequires_env: [{name: PYTHONSTARTUP, secret: true}]\n',
     "changes how programs run"),
    ('name: demo\noptional_env: [PIP_INDEX_URL]\n', "changes how programs run"),
    ('name: demo\nrequires_env: ["OPENAI_API_KEY\\n"]\n', "is not an environment variable name"),
    ('name: demo\nrequires_env:\n  - name: "EVIL_KEY\\n"\n', "is not an environment variable name"),
    ('name: demo\nprovides_tools: [run_shell]\ndescription: "Weather.\\e[2A\\e[2K\\e[1B\\e[2K"\n',
     "control characters"),
    ('name: demo\nversion: "1.0\\e[8m"\nprovides_hooks: [pre_tool_call]\n', "control characters"),
    ('name: demo\nrequires_env:\n  - name: K\n    description: "x\\e]8;;http://e\\a"\n',
     "control characters"),
])
def test_manifest_names_and_text_are_checked(home, tmp_path, cli, manifest, problem):
    """A trailing newline passed the name checks (`$` matches before it): the .env got a
    line `OPENAI_API_KEY` and a line `=value`; escape sequences could erase the tools and
    hooks lines of the consent screen."""
    (home / ".env").write_text("OTHER=1\n")
    src = plugin_folder(tmp_path / "demo", manifest)
    code, out, err = cli("plugins", "install", str(src), input="y\nattacker-chosen\n")
    assert (home / ".env").read_text() == "OTHER=1\n"
    assert "\x1b" not in out
    assert code == 1 and problem in err, err
    nothing_installed(home)


def test_descriptions_keep_newlines(home, tmp_path, cli):
    src = plugin_folder(tmp_path / "demo", "name: demo\ndescription: |\n  Line one.\n  Line two.\n")
    code, out, err = cli("plugins", "install", str(src), "--no-input")
    assert code == 0, err
    assert "Line one.\nLine two." in out
