"""One student pastes 15 MB into a text box of a served app while another works: refused in one sentence, in seconds.

Students are benchmarks/students.py's (Streamlit's own websocket protocol) on the app as scripts/app.sh serves
it (behind HAProxy where it is installed); benchmarks/classroom.py --scenario hostile measures the same with every box.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from conftest import run_async

from benchmarks import students

ROOT = Path(__file__).resolve().parents[1]


def test_a_pasted_book_is_refused_and_the_class_goes_on():
    async def lesson() -> None:
        server = students.Server(ROOT / "app.py", env={"BPE_PRELOAD": "0"})
        try:
            honest, hostile = server.student("honest"), server.student("hostile")
            await asyncio.gather(honest.open(timeout=120), hostile.open(timeout=120))
            await hostile.go("Tokenize & export", timeout=120)
            box = next(w for name, w in hostile.widgets.items() if name.startswith("Text to tokenize"))
            before = hostile.values[box.id].string_value
            pasted = asyncio.create_task(hostile.type("Text to tokenize", "many words " * 1_500_000, timeout=30))  # 16.5 MB
            for _ in range(3):
                await honest.click("Next", timeout=30)  # the honest student is answered meanwhile
            await pasted  # refused within 30 s
            assert hostile.shows("That text has 16,500,000 characters; this box takes up to 100,000 (a book chapter)")
            assert hostile.values[box.id].string_value == before  # the box got its text back: no 16 MB sent again
            assert honest.merge_shown() == 4
            await asyncio.gather(honest.close(), hostile.close())
        finally:
            server.stop()

    run_async(lesson())
