"""When a submission was handed in, from the instructor's side, not from the student's timestamp.txt.

nbgrader's `submit` writes timestamp.txt in the student's own process, so a student can write any time into
it (issue 42: a backdated file escaped a "zero" late penalty). The course's time is an inode change time
(ctime), which the kernel sets whenever a file changes and no process can set back (`touch` and copystat move
it forward): on a hub, `nbgrader collect` (CourseCollect below) reads it from the submission's files in the
exchange before copying them, the latest change the student's process made there; off a hub, it is when the
files reached submitted/. It is remembered per submission and content in autograded/received.json (make grade
records one it has not seen), so a later copy or `chmod` does not move it; an instructor may correct an entry
by hand. A timestamp.txt that disagrees where it matters (it claims a time after the files arrived, or on time
where they arrived after the due date) is flagged for review.
"""
import hashlib
import json
import os
from datetime import datetime, timezone
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect

LEDGER = Path("autograded") / "received.json"
SLACK_S = 60   # a clock a minute off between the student's server and the course's is no disagreement


def arrival(folder):
    """The latest inode change time of the submission's top-level files (UTC): when they last changed here."""
    times = [p.stat().st_ctime for p in Path(folder).iterdir() if p.is_file() and not p.is_symlink()]
    return datetime.fromtimestamp(max(times) if times else Path(folder).stat().st_ctime, timezone.utc)


def digest(folder):
    """The submission's notebooks, hashed: a submission handed in again is a new arrival."""
    h = hashlib.sha256()
    for p in sorted(Path(folder).glob("*.ipynb")):
        if p.is_file() and not p.is_symlink():
            h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def load(root):
    try:
        data = json.loads((Path(root) / LEDGER).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def received(root, pairs):
    """{(student, aid): the time (UTC, ISO) the course has for that submission}, recording a first arrival in the
    ledger. Runs in the parent, once per class run, before any worker reads it."""
    root = Path(root)
    ledger, out, changed = load(root), {}, False
    for student, aid in pairs:
        folder = root / "submitted" / student / aid
        key, seen = f"{student}/{aid}", digest(folder)
        entry = ledger.get(key)
        if not (isinstance(entry, dict) and entry.get("digest") == seen and parse(entry.get("time"))):
            entry = {"digest": seen, "time": arrival(folder).isoformat(timespec="seconds")}
            ledger[key], changed = entry, True
        out[(student, aid)] = parse(entry["time"]).isoformat(timespec="seconds")
    if changed:
        path = root / LEDGER
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(ledger, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    return out


def parse(text):
    """A time (aware, UTC) from an ISO string or nbgrader's timestamp format; None if it is not one."""
    from nbgrader.utils import parse_utc

    try:
        t = parse_utc(str(text).strip())
    except Exception:  # not a date
        return None
    return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)


def disagreement(claimed, course_time, duedate=None):
    """Why the student's timestamp.txt (`claimed`) disagrees with the course's time where it matters, or None."""
    said, have = parse(claimed), parse(course_time)
    due = parse(duedate) if duedate else None
    if said is None or have is None:
        return None
    if (said - have).total_seconds() > SLACK_S:
        why = "a time after its files reached the course"
    elif due is not None and said <= due < have:
        why = f"a time before the due date ({due:%Y-%m-%d %H:%M} UTC), but its files reached the course after it"
    else:
        return None
    return (f"timestamp.txt (written in the student's own process) says {said:%Y-%m-%d %H:%M:%S} UTC, {why}, at "
            f"{have:%Y-%m-%d %H:%M:%S} UTC: lateness was charged from the course's time. If you know it was on "
            f"time, correct its time in {LEDGER} and grade again")


def charge(db_url, root, student, aid, res):
    """nbgrader's own paths (`nbgrader autograde` by hand, the formgrader's Autograde): the submission's time in
    the gradebook, which nbgrader took from timestamp.txt, becomes the course's before the late penalty is
    computed; a timestamp.txt that disagrees is noted on `res` (flagged)."""
    from nbgrader.api import Gradebook

    folder = Path(root) / "submitted" / student / aid
    if not folder.is_dir():
        return
    when = received(root, [(student, aid)])[(student, aid)]
    with Gradebook(db_url) as gb:
        sub = gb.find_submission(aid, student)
        due = sub.assignment.duedate
        stamp = folder / "timestamp.txt"
        if stamp.is_file() and not stamp.is_symlink() and stamp.stat().st_size < 1024:
            said = disagreement(stamp.read_text(encoding="utf-8", errors="replace"), when,
                                due.isoformat() + "+00:00" if due else None)
            if said:
                res.note(said, flag=True)
        sub.timestamp = parse(when).replace(tzinfo=None)   # the gradebook's times are naive UTC
        gb.db.commit()


def record(root, student, aid, when, folder):
    """Remember `when` (UTC) as the arrival of the submission now in `folder`, for (student, aid)."""
    root = Path(root)
    ledger = load(root)
    ledger[f"{student}/{aid}"] = {"digest": digest(folder), "time": when.isoformat(timespec="seconds")}
    path = root / LEDGER
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(ledger, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


class CourseCollect(ExchangeCollect):
    """`nbgrader collect` (grading/nbgrader_config.py names it): as nbgrader's, and each submission's time is taken
    from the exchange before the copy, where its files' inode change times are still the server's record of when
    the student's process last changed them (the copy's are the collection's)."""

    def do_copy(self, src, dest, log=None):
        when = arrival(src)
        super().do_copy(src, dest, log)
        parts = Path(dest).parts
        record(self.coursedir.root, parts[-2], parts[-1], when, dest)
