"""Draw the cache-hit ratios written by ``benchmarks/dispatch.py --json`` as a bar chart, for the docs.

Run (matplotlib comes with the ``bench`` extra)::

    python benchmarks/dispatch.py --json docs/assets/dispatch.json
    python benchmarks/plot_dispatch.py [docs/assets/dispatch.json] [--out docs/assets/dispatch.png] [--markdown]

One group of bars per case: the median time of a cache-hit call of ``jaxstatic.jit``, ``equinox.filter_jit`` and
``jax_dataclasses.jit`` (where the case's static values are hashable, which it requires), each divided by
``jax.jit``'s in the same rounds. The axis is logarithmic: Equinox is several times ``jax.jit``, the others within
tens of percent of it. The date, the machine and the versions the figures were measured with are printed under the
chart, from the JSON, wrapped to the image's width. ``--markdown`` also prints the same figures as a table, to paste into the docs.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure  # drawn straight to a file: no pyplot, no display
from matplotlib.ticker import FixedLocator, NullLocator

ROOT = Path(__file__).resolve().parent.parent
CAPTION_WIDTH = 150  # characters per line of the footer, which fit the figure's width at its font size
CAPTION_POINTS = 7
CONTENDERS = {  # the JSON's name -> label and colour
    "jaxstatic.jit": ("jaxstatic.jit", "#3f51b5"),
    "eqx.filter_jit": ("equinox.filter_jit", "#9e9e9e"),
    "jdc.jit": ("jax_dataclasses.jit", "#ff9800"),
}


def turns(data: dict[str, Any]) -> str:
    """How often the contenders alternated within a round (older files: once)."""
    blocks = data.get("blocks", 1)
    return f", the contenders alternating every {data['calls'] // blocks} calls" if blocks > 1 else ""


def caption(data: dict[str, Any]) -> str:
    """When, where and with what the figures were measured."""
    machine, v = data["machine"], data["versions"]
    load = ", ".join(f"{x:g}" for x in machine.get("load_average_before", []))
    return (f"Measured {data['date']} on {machine['cpu']} ({machine['cores']} cores, {machine['system']}; "
            f"load average {load} at start); {data['rounds']} interleaved rounds of {data['calls']} calls"
            f"{turns(data)}.\n"
            "For the dict configs jax.jit gets the same values as a pre-built tuple (it rejects dicts), and "
            "jax_dataclasses.jit cannot take them.\n"
            f"Python {v['python']}, jax {v['jax']}, jaxlib {v['jaxlib']}, jaxstatic {v['jaxstatic']}, "
            f"equinox {v['equinox']}, jax_dataclasses {v['jax_dataclasses']}.")


def plot(data: dict[str, Any], out: Path) -> None:
    cases = data["cases"]
    height = 0.8 / len(CONTENDERS)
    fig = Figure(figsize=(9, 0.55 * len(cases) + 2.2))
    ax = fig.subplots()
    for i, (name, (label, colour)) in enumerate(CONTENDERS.items()):
        rows = [(n, c["ratio_to_jax_jit"][name]["median"]) for n, c in enumerate(cases)
                if c["ratio_to_jax_jit"].get(name)]
        ys = [n + (i - 1) * height for n, _ in rows]
        bars = ax.barh(ys, [r for _, r in rows], height=height, color=colour, label=label)
        ax.bar_label(bars, labels=[f"{r:.2f}" for _, r in rows], padding=2, fontsize=7)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlim(0.3, 150)
    ticks = [0.5, 1, 2, 5, 10, 20, 50, 100]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_yticks(range(len(cases)), [c["case"] for c in cases], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("cache-hit time per call, ratio to jax.jit (median; 1 = jax.jit, lower is faster)")
    ax.set_title("Dispatch cost of a cache hit against jax.jit")
    ax.legend(loc="upper right", fontsize=8)
    footer = "\n".join(textwrap.fill(line, CAPTION_WIDTH) for line in caption(data).splitlines())
    fig.text(0.01, 0.01, footer, fontsize=CAPTION_POINTS, va="bottom")
    # The chart above the footer's lines (their height in inches, 1.5 line spacing, over the figure's height).
    footer_inches = (footer.count("\n") + 1) * CAPTION_POINTS * 1.5 / 72 + 0.25
    fig.tight_layout(rect=(0, footer_inches / fig.get_figheight(), 1, 1))
    # bbox_inches="tight": whatever is drawn lies inside the image, even a footer longer than CAPTION_WIDTH allows.
    fig.savefig(out, dpi=110, bbox_inches="tight", pad_inches=0.1,
                metadata={"Software": None})  # no matplotlib version stamp: diffs show data only


def markdown(data: dict[str, Any]) -> str:
    """The figures as a markdown table (median ratio to jax.jit, and in brackets the ratio of the fastest rounds),
    then the caption."""
    def cell(c: dict[str, Any], name: str) -> str:
        r = c["ratio_to_jax_jit"].get(name)
        return "-" if r is None else f"{r['median']:.2f} ({r['best']:.2f})"

    lines = ["| case | jax.jit (us/call) | jaxstatic.jit | equinox.filter_jit | jax_dataclasses.jit |",
             "|---|---|---|---|---|"]
    for c in data["cases"]:
        lines.append(f"| {c['case']} | {c['median_us']['jax.jit']:.1f} | "
                     + " | ".join(cell(c, name) for name in CONTENDERS) + " |")
    return "\n".join([*lines, "", caption(data).replace("\n", " ")])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("json", nargs="?", default=str(ROOT / "docs/assets/dispatch.json"))
    parser.add_argument("--out", default=str(ROOT / "docs/assets/dispatch.png"))
    parser.add_argument("--markdown", action="store_true", help="also print the figures as a markdown table")
    args = parser.parse_args()
    data = json.loads(Path(args.json).read_text())
    plot(data, Path(args.out))
    print(f"wrote {args.out}")
    if args.markdown:
        print(markdown(data))


if __name__ == "__main__":
    main()
