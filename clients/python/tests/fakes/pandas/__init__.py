"""A stand-in for pandas (not installed here, and no dependency of the SDK) with what the SDK and
docs/python.md use: json_normalize, and a DataFrame with shape, columns, len, head, sort_values
and column selection. It records rows as dicts, nested fields flattened with dots as pandas does."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple, Union

__fake__ = True


class DataFrame:
    def __init__(self, rows: List[Dict[str, Any]], columns: Union[List[str], None] = None) -> None:
        self.rows = rows
        if columns is None:
            columns = []
            for row in rows:
                for key in row:
                    if key not in columns:
                        columns.append(key)
        self.columns = columns

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def shape(self) -> Tuple[int, int]:
        return (len(self.rows), len(self.columns))

    def head(self, n: int = 5) -> "DataFrame":
        return DataFrame(self.rows[:n], self.columns)

    def sort_values(self, column: str, ascending: bool = True) -> "DataFrame":
        present = [row for row in self.rows if row.get(column) is not None]
        missing = [row for row in self.rows if row.get(column) is None]
        return DataFrame(sorted(present, key=lambda row: row[column], reverse=not ascending) + missing, self.columns)

    def __getitem__(self, column: Union[str, List[str]]) -> Any:
        if isinstance(column, list):
            for name in column:
                if name not in self.columns:
                    raise KeyError(name)
            return DataFrame([{name: row.get(name) for name in column} for row in self.rows], list(column))
        if column not in self.columns:
            raise KeyError(column)
        return [row.get(column) for row in self.rows]

    def __repr__(self) -> str:
        lines = ["  ".join(self.columns)]
        lines += ["  ".join(str(row.get(name)) for name in self.columns) for row in self.rows[:10]]
        return "\n".join(lines) + f"\n[{len(self.rows)} rows x {len(self.columns)} columns]"


def _flatten(value: Dict[str, Any], prefix: str = "") -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for key, entry in value.items():
        name = f"{prefix}{key}"
        if isinstance(entry, dict) and entry:
            out.update(_flatten(entry, name + "."))
        else:
            out[name] = entry
    return out


def json_normalize(records: List[Dict[str, Any]]) -> DataFrame:
    if not all(isinstance(record, dict) for record in records):
        raise TypeError("json_normalize takes dicts")
    return DataFrame([_flatten(record) for record in records])
