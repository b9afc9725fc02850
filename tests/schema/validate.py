#!/usr/bin/env python3
"""Runs each command line of tests/schema/cases.txt with --format json and validates the output against
docs/schema/<command>.json (JSON Schema draft 2020-12, "integer" only for numbers written without a fraction or
exponent). Exits 1 naming every violation.
   validate.py EDGEPLAN_BINARY SOURCE_DIR"""
import json
import shlex
import subprocess
import sys
from pathlib import Path

try:
    import jsonschema
except ImportError:
    sys.exit("validate.py: the Python module jsonschema is missing (Debian package python3-jsonschema)")


def json_integer(checker, instance) -> bool:
    """A JSON integer as written (4096), not a number that happens to be whole (4096.0): draft 2020-12 lets
    "integer" match both, and edgeplan writes counts as integers (docs/json.md), so the schemas hold it to that."""
    return isinstance(instance, int) and not isinstance(instance, bool)


Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", json_integer))


def main() -> int:
    binary, source = sys.argv[1], Path(sys.argv[2])
    failures = 0
    cases = [line for line in (source / "tests/schema/cases.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    for line in cases:
        args = shlex.split(line)
        run = subprocess.run([binary, *args, "--format", "json"], cwd=source, capture_output=True, text=True)
        if run.returncode not in (0, 1):  # 1: a check that fails on purpose
            print(f"FAIL {line}: exit {run.returncode}: {run.stderr.strip()}")
            failures += 1
            continue
        schema = json.loads((source / "docs/schema" / f"{args[0]}.json").read_text())
        validator = Validator(schema)
        errors = sorted(validator.iter_errors(json.loads(run.stdout)), key=lambda e: list(e.absolute_path))
        for e in errors:
            print(f"FAIL {line}: at {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}")
        failures += len(errors)
        if not errors:
            print(f"ok   {line}")
    print(f"{len(cases)} outputs, {failures} violations")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
