"""The direct dist-info scan agrees with importlib.metadata, which it replaces at start-up."""

from __future__ import annotations

import sys
import zipfile
from importlib.metadata import entry_points

from host.plugins.discovery import GROUP, discover


def as_rows(candidates):
    return sorted((c.name, c.entry_point, c.distribution, c.version) for c in candidates)


def test_scan_matches_importlib_metadata(site, unique):
    module = unique("agree")
    site(
        "Agree.Dist",
        version="3.1",
        entry_points={"agree": f"{module}:plugin [extra]"},
        modules={module: "plugin = object()\n"},
    )
    expected = sorted(
        (ep.name, ep.value.split("[")[0].strip(), ep.dist.name, ep.dist.version)
        for ep in entry_points(group=GROUP)
    )
    assert as_rows(discover()) == expected
    assert ("agree", f"{module}:plugin", "Agree.Dist", "3.1") in expected


def test_first_distribution_of_a_name_on_the_path_wins(tmp_path, monkeypatch):
    from tests.distributions import write_distribution

    first, second = tmp_path / "first", tmp_path / "second"
    write_distribution(first, "twin", version="2.0", entry_points={"twin": "twin_a"}, modules={})
    write_distribution(second, "twin", version="1.0", entry_points={"twin": "twin_b"}, modules={})
    monkeypatch.syspath_prepend(str(second))
    monkeypatch.syspath_prepend(str(first))
    twin = next(c for c in discover() if c.name == "twin")
    assert (twin.entry_point, twin.version) == ("twin_a", "2.0")


def test_a_first_distribution_without_plugins_hides_a_later_copy_with_some(tmp_path, monkeypatch):
    """As in importlib.metadata: the later copy (an upgrade's leftover, say) is not consulted."""
    from tests.distributions import write_distribution

    first, second = tmp_path / "first", tmp_path / "second"
    write_distribution(first, "stale", version="2.0", entry_points={}, modules={})
    write_distribution(second, "stale", version="1.0", entry_points={"old": "old_a"}, modules={})
    monkeypatch.syspath_prepend(str(second))
    monkeypatch.syspath_prepend(str(first))
    assert [ep for ep in entry_points(group=GROUP) if ep.name == "old"] == []
    assert [c for c in discover() if c.name == "old"] == []


def test_zip_archives_on_the_path_are_read_through_importlib_metadata(tmp_path, monkeypatch):
    archive = tmp_path / "zipped.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("zipped_plugin.py", "requires = ()\n")
        zf.writestr(
            "zipped-0.9.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped\nVersion: 0.9\n"
        )
        zf.writestr("zipped-0.9.dist-info/entry_points.txt", f"[{GROUP}]\nzipped = zipped_plugin\n")
    monkeypatch.syspath_prepend(str(archive))
    zipped = next(c for c in discover() if c.name == "zipped")
    assert (zipped.distribution, zipped.version) == ("zipped", "0.9")
    assert zipped.load().requires == ()
    sys.modules.pop("zipped_plugin", None)


def test_crlf_metadata_files_read_as_importlib_metadata_reads_them(tmp_path, monkeypatch):
    info = tmp_path / "crlf_dist-1.5.dist-info"
    info.mkdir()
    (info / "METADATA").write_bytes(
        b"Metadata-Version: 2.1\r\nName: crlf-dist\r\nVersion: 1.5\r\n\r\nDescription \xc3\xa9\r\n"
    )
    (info / "entry_points.txt").write_bytes(
        f"[console_scripts]\r\nx = y\r\n\r\n[{GROUP}]\r\ncrlf = crlf_plugin:obj\r\n".encode()
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    expected = [
        (ep.name, ep.value, ep.dist.name, ep.dist.version)
        for ep in entry_points(group=GROUP)
        if ep.name == "crlf"
    ]
    found = [c for c in discover() if c.name == "crlf"]
    assert [(c.name, c.entry_point, c.distribution, c.version) for c in found] == expected
    assert expected == [("crlf", "crlf_plugin:obj", "crlf-dist", "1.5")]
