"""Write docs/scenario-reference.md from the scenario JSON Schema (`holdoff schema`).

Every table of a scenario file gets a section; every field a row with its
type, unit, default, bounds and allowed values, read from the schema the core
generates from its own types (so the page cannot disagree with the code).
Units come from the field description (`[ms]`, `[1.024 us]`) or, failing
that, from the name's unit suffix (`_ms`, `_256ns`, `_per_s`, ...).

    python scripts/scenario_reference.py            # rewrite docs/scenario-reference.md
    python scripts/scenario_reference.py --check    # exit 1 if the page is stale

`tests/test_docs.py` regenerates the page and compares.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "scenario-reference.md"
COMMAND = "python scripts/scenario_reference.py"

_UNIT_IN_TEXT = re.compile(r"\[([^\]]+)\]")
_UNIT_SUFFIXES = (
    ("_1024ns", "1.024 us"),
    ("_256ns", "256 ns"),
    ("_per_s", "1/s"),
    ("_pps", "frames/s"),
    ("_bps", "bit/s"),
    ("_bytes", "bytes"),
    ("_mhz", "MHz"),
    ("_ms", "ms"),
    ("_us", "us"),
    ("_ns", "ns"),
    ("_ps_per_byte", "ps/byte"),
)


def _is_array(node: dict[str, Any]) -> bool:
    kinds = node.get("type")
    return kinds == "array" or (isinstance(kinds, list) and "array" in kinds)


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(value: Any) -> str:
    return "`" + json.dumps(value, ensure_ascii=False).replace("|", "\\|") + "`"


class Reference:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.defs: dict[str, Any] = schema.get("$defs", {})
        self.sections: list[str] = []
        self.done: set[str] = set()

    def resolve(self, node: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        """The schema node behind a ``$ref`` / single-ref ``anyOf`` (and the def name)."""
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            return self.defs[name], name
        for key in ("anyOf", "allOf"):
            refs = [n for n in node.get(key, []) if n.get("type") != "null"]
            if len(refs) == 1 and "$ref" in refs[0]:
                return self.resolve(refs[0])
        return node, None

    def allowed(self, node: dict[str, Any]) -> list[Any]:
        target, _ = self.resolve(node)
        if "enum" in target:
            return [v for v in target["enum"] if v is not None]
        if "const" in target:
            return [target["const"]]
        values = []
        for option in target.get("oneOf", []):
            if "const" in option:
                values.append(option["const"])
            elif "enum" in option:
                values.extend(option["enum"])
        return values

    def type_name(self, node: dict[str, Any]) -> str:
        target, name = self.resolve(node)
        if _is_array(target):
            optional = " (optional)" if "null" in (target.get("type") or []) else ""
            return f"list of {self.type_name(target.get('items', {}))}{optional}"
        if self.is_table(target):
            return "table"
        if self.allowed(node):
            return "string"
        kinds = target.get("type", "")
        if isinstance(kinds, list):
            optional = "null" in kinds
            kinds = " or ".join(k for k in kinds if k != "null")
            return f"{kinds} (optional)" if optional else kinds
        return kinds or (name or "value")

    def is_table(self, node: dict[str, Any]) -> bool:
        target, _ = self.resolve(node)
        if target.get("type") == "object" or "properties" in target:
            return True
        return any(o.get("type") == "object" for o in target.get("oneOf", []))

    @staticmethod
    def unit(name: str, description: str) -> str:
        for found in _UNIT_IN_TEXT.finditer(description):
            unit = found.group(1)
            if not unit.isdigit() and "`" not in unit and unit != "*":
                return unit
        for suffix, unit in _UNIT_SUFFIXES:
            if name.endswith(suffix):
                return unit
        return ""

    @staticmethod
    def bounds(node: dict[str, Any]) -> str:
        parts = []
        if "minimum" in node and node["minimum"] != 0:
            parts.append(f">= {node['minimum']}")
        if "exclusiveMinimum" in node:
            parts.append(f"> {node['exclusiveMinimum']}")
        if "maximum" in node:
            parts.append(f"<= {node['maximum']}")
        if "exclusiveMaximum" in node:
            parts.append(f"< {node['exclusiveMaximum']}")
        if not parts and node.get("minimum") == 0:
            parts.append(">= 0")
        return ", ".join(parts)

    def table(
        self, path: str, node: dict[str, Any], title: str, text: str, level: str = "##"
    ) -> None:
        props: dict[str, Any] = node.get("properties", {})
        required = set(node.get("required", []))
        rows = [
            "| field | type | unit | default | bounds | allowed values | description |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        children: list[tuple[str, dict[str, Any]]] = []
        for name, prop in props.items():
            target, _ = self.resolve(prop)
            description = prop.get("description") or target.get("description", "")
            if name == "kind" and "const" in prop:
                continue
            default = "required" if name in required else ""
            if "default" in prop and not self.is_table(prop):
                default = _code(prop["default"]) if prop["default"] is not None else "none"
            elif "default" in prop:
                default = "see below"
            allowed = ", ".join(_code(v) for v in self.allowed(prop))
            rows.append(
                f"| `{name}` | {self.type_name(prop)} | {_cell(self.unit(name, description))} | "
                f"{default} | {self.bounds(target if target.get('type') else prop)} | "
                f"{allowed} | {_cell(description)} |"
            )
            inner = target.get("items", target) if _is_array(target) else target
            inner, _ = self.resolve(inner)
            if self.is_table(inner):
                suffix = "[]" if _is_array(target) else ""
                children.append((f"{path}.{name}{suffix}" if path else f"{name}{suffix}", inner))
        self.sections.append(f"{level} {title}\n")
        if text:
            self.sections.append(_cell(text) + "\n")
        self.sections.append("\n".join(rows) + "\n")
        for child_path, child in children:
            self.walk(child_path, child)

    def walk(self, path: str, node: dict[str, Any]) -> None:
        if path in self.done:
            return
        self.done.add(path)
        variants = [o for o in node.get("oneOf", []) if o.get("type") == "object"]
        if variants:
            self.sections.append(f"## `{path}`\n")
            self.sections.append(
                _cell(node.get("description", "")) + " One of the following, chosen by `kind`:\n"
            )
            for option in variants:
                kind = option.get("properties", {}).get("kind", {}).get("const", "?")
                self.table(
                    f"{path}",
                    option,
                    f'`{path}` with `kind = "{kind}"`',
                    option.get("description", ""),
                    level="###",
                )
            return
        self.table(path, node, f"`{path}`" if path else "Top level", node.get("description", ""))


# Field descriptions come from the core's doc comments, which cite public
# sources only; a citation of the project's private notes stops the script.
_PRIVATE = re.compile(r"\b(algorithms|seed-scenarios|driver-facts|style-anchors)\.md\b")


def _public(text: str) -> str:
    private = _PRIVATE.search(text)
    if private:
        raise SystemExit(
            f"the schema cites {private.group(0)!r}, which is not public: cite the public "
            "source in the doc comment instead"
        )
    return text


def render(schema: dict[str, Any]) -> str:
    ref = Reference(schema)
    ref.walk("", schema)
    head = (
        "# Scenario reference\n\n"
        "<!-- Generated from `holdoff schema` by `python scripts/scenario_reference.py`; "
        "do not edit by hand. -->\n\n"
        "Every table and field of a scenario file (TOML), with its type, unit, default, "
        "bounds and allowed values, generated from the JSON Schema that `holdoff schema` "
        "prints. A path like `hosts[].nics[]` is a list of tables (`[[hosts.nics]]` in "
        "TOML); sweeps and `holdoff run --set` address one element as `hosts[0].nics[0]` "
        "or all as `hosts[*]`. Bounds not listed are those of the type (non-negative "
        "integers); the core checks further rules when it reads a scenario and names the "
        "field in its error. Worked examples: [getting started](getting-started.md) and "
        "the files in `examples/` (`holdoff examples`).\n\n"
    )
    return _public(head + "\n".join(ref.sections))


def _schema() -> dict[str, Any]:
    import holdoff

    schema: dict[str, Any] = holdoff.schema()
    return schema


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is stale")
    args = parser.parse_args(argv)
    text = render(_schema())
    if args.check:
        if PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is stale: run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
