"""A maker's module, as make deploy APP=makerapp.py puts it on the board (/app.py): the
firmware calls register(server, board) after its own tools. The tests call its tools
through the serial bridge: a slow one to cancel (it says on the console that it began),
one that says whether it was cancelled, one that prints what a maker's debugging print()
puts on the line (the line the MCP session shares), and an echo for long arguments.
"""
import asyncio

from umcp import INTEGER, STRING, Property, PropertyList

_last = {"cancelled": None}


def register(server, board):
    async def wait(args):
        _last["cancelled"] = False
        print("maker: waiting %d s" % args["seconds"])
        try:
            await asyncio.sleep(args["seconds"])
        except asyncio.CancelledError:
            _last["cancelled"] = True
            raise
        return "waited %d s" % args["seconds"]

    def cancelled(args):
        return _last["cancelled"]

    def chatter(args):
        print("maker: a debugging line")
        print("\x1e{not json, but it starts like a record")
        print("maker: \x1b[31mcoloured\x1b[0m and a lone \x06 byte")
        return "said"

    server.add_tool("self.lab.wait", "Wait some seconds, then answer.",
                    PropertyList([Property("seconds", INTEGER, minimum=1, maximum=600)]), wait)
    server.add_tool("self.lab.cancelled", "Whether the last wait was cancelled.", PropertyList([]),
                    cancelled, read_only=True)
    server.add_tool("self.lab.chatter", "Print some lines on the board's console.", PropertyList([]),
                    chatter)
    server.add_tool("self.lab.echo", "The text, and its length.", PropertyList([Property("text", STRING)]),
                    lambda args: "%d %s" % (len(args["text"]), args["text"]), read_only=True)
