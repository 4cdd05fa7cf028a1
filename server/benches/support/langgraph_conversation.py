"""The conversation bench's peer: the same messages through LangGraph.

Run by server/benches/conversation.rs with the virtualenv it makes:
    python langgraph_conversation.py CONVERSATION.json DB TURNS MARKS

A StateGraph with a `messages` channel (add_messages) and one node that
answers with the reply Heddle's offline model gave at that turn, compiled
with SqliteSaver on DB; one invoke per turn on one thread, as Heddle's
chat agent runs. Prints "TURN BYTES" (the database file with its WAL)
after each turn in MARKS and after the last.
"""

import json
import os
import sqlite3
import sys

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, END, MessagesState, StateGraph


def main():
    conversation_path, db_path, turns, marks = sys.argv[1:5]
    turns = int(turns)
    marks = {int(m) for m in marks.split(",") if m}
    with open(conversation_path) as f:
        messages = json.load(f)
    said = [m for m in messages if m.get("role") == "user"]
    replies = [m for m in messages if m.get("role") == "assistant"]

    turn_of = {"n": 0}

    def agent(state):
        reply = replies[turn_of["n"]]
        return {"messages": [{"role": "assistant", "content": reply["content"]}]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)

    connection = sqlite3.connect(db_path, check_same_thread=False)
    graph = builder.compile(checkpointer=SqliteSaver(connection))
    config = {"configurable": {"thread_id": "bench"}}
    for turn in range(1, min(turns, len(said), len(replies)) + 1):
        turn_of["n"] = turn - 1
        graph.invoke(
            {"messages": [{"role": "user", "content": said[turn - 1]["content"]}]},
            config,
        )
        if turn in marks or turn == turns:
            connection.commit()
            size = os.path.getsize(db_path)
            wal = db_path + "-wal"
            if os.path.exists(wal):
                size += os.path.getsize(wal)
            print(turn, size, flush=True)


if __name__ == "__main__":
    main()
