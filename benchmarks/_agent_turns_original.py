"""Run inside the hermes-agent 0.19.0 virtualenv: a scripted session of N turns through its
AIAgent against the fake server at argv[1]; prints the per-turn wall times as JSON."""

import json
import sys
import time

base_url, turns, workdir = sys.argv[1], int(sys.argv[2]), sys.argv[3]

from hermes_state import SessionDB  # noqa: E402
from run_agent import AIAgent  # noqa: E402

agent = AIAgent(base_url=base_url, api_key="x", model="fake-model", quiet_mode=True,
                enabled_toolsets=["file"], session_db=SessionDB(), platform="cli")
history = None
times = []
for turn in range(turns):
    started = time.perf_counter()
    result = agent.run_conversation(f"turn {turn}: look at the files in {workdir}",
                                    conversation_history=history)
    times.append(time.perf_counter() - started)
    history = result["messages"]
    assert result.get("final_response"), result
print(json.dumps(times))
