"""The one shape every benchmark reports: figures beside their peer's, with the ratio.

A figure is {"metric", "unit", "adapt", "peer", "peer_value", "ratio", "better", "load"}: ratio is
adapt / peer, and "better" says which way is good ("lower" for latencies, "higher" for
throughputs), so a reader (and bench/summary.py) can tell a win from a loss.
"""

import json
import os
import platform
import time


def figure(metric, unit, adapt, peer, peer_value, better):
    """`load` is the machine's 1-minute load average when the figure was taken (made right
    after its measurement): a figure taken with the cores busy elsewhere shows as such."""
    ratio = round(adapt / peer_value, 2) if peer_value else None
    return {"metric": metric, "unit": unit, "adapt": adapt, "peer": peer, "peer_value": peer_value,
            "ratio": ratio, "better": better, "load": round(os.getloadavg()[0], 2)}


def table_lines(rows, with_benchmark=False):
    header = (("benchmark",) if with_benchmark else ()) + ("metric", "adapt", "peer", "peer value", "adapt/peer",
                                                           "load")
    body = []
    for r in rows:
        ratio = "-" if r["ratio"] is None else "%.2fx" % r["ratio"]
        load = "-" if r.get("load") is None else "%.2f" % r["load"]
        cells = ((r.get("benchmark", ""),) if with_benchmark else ()) + (
            r["metric"], "%.4g %s" % (r["adapt"], r["unit"]), r["peer"], "%.4g %s" % (r["peer_value"], r["unit"]),
            ratio + (" (%s is better)" % r["better"]), load)
        body.append(cells)
    widths = [max(len(row[i]) for row in body + [header]) for i in range(len(header))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in [header] + body]


def readable(value):
    """A figure as the README writes it: thousands separated, about four significant digits."""
    if value >= 1000:
        return "{:,.0f}".format(value)
    if value >= 10:
        return "%.1f" % value
    if value >= 1:
        return "%.2f" % value
    return "%.3g" % value


def markdown_lines(rows):
    """The rows as the Markdown table of the README's "Latest full run"."""
    lines = ["| benchmark | figure | adapt | peer | peer's | adapt/peer | load |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        ratio = "-" if r["ratio"] is None else "%.2fx (%s is better)" % (r["ratio"], r["better"])
        load = "-" if r.get("load") is None else "%.2f" % r["load"]
        lines.append("| %s | %s | %s %s | %s | %s %s | %s | %s |" % (
            r.get("benchmark", ""), r["metric"], readable(r["adapt"]), r["unit"], r["peer"],
            readable(r["peer_value"]), r["unit"], ratio, load))
    return lines


def print_table(rows):
    for line in table_lines(rows):
        print(line)


def write_report(path, benchmark, rows, details):
    report = {"benchmark": benchmark, "figures": rows,
              "host": {"kernel": platform.release(), "cpus": os.cpu_count()},
              "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **details}
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    os.replace(path + ".tmp", path)
