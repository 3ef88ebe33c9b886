"""The self.alarms.list call and the device://alarms resource's read, loaded for each
(umcp.compat.OnDemand) and dropped after (umcpfw.alarmtools' add and remove are not
loaded for a list): the alarms read from flash through umcpfw.alarmring, loaded for the
call where there are alarms. `tools` is the board's CommonTools; its `alarms` the alarms'
clock while there are some (umcpfw.alarmring's)."""

from umcp.compat import forget_modules


def listed(tools, args=None):
    """self.alarms.list -> {"alarms": [each alarm's entry (umcpfw.alarmring's), soonest
    first]}."""
    clock = tools.alarms
    if clock is None:
        return {"alarms": []}
    from umcpfw import alarmring as ring

    try:
        now = ring.now(clock)
        entries = [ring.entry(alarm, now) for alarm in ring.load()[1]]
    finally:
        forget_modules("umcpfw.alarmring")
    entries.sort(key=lambda shown: (shown["in_seconds"], shown["id"]))  # (MicroPython: not stable)
    return {"alarms": entries}


def read(tools):
    """device://alarms: self.alarms.list's answer."""
    return listed(tools)
