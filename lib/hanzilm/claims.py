"""The papers' claims as data, and one verdict per claim on a run's results: the book's only judge.

`targets/claims.csv` holds every finding of the three papers a reader comes to check, one row each: where the
paper makes it (`cites`), the claim in the paper's words, and how it is checked on `results/<profile>/`:

- `kind`: `finding` (a claim about the world) or `check` (a data-file or parameter count: that our copy of the
  setting agrees with the paper's; counted apart from the findings).
- `quantity`: an expression over *references* to result rows, written `{chapter/table:metric[key=value; ...]}`
  (each reference must select exactly one row of that results table), with `+ - * /`, `min`, `max`, `abs`.
- `expect`: the direction the paper states, e.g. `> 0` (a gain), `< 1` (a ratio below one): a *comparative*
  claim. Empty for a claim about a value alone, whose `better` says which way is better (`higher`, `lower`).
- `paper_value`: the paper's value of the quantity; when empty, the same expression over the paper values that
  the results tables carry beside ours.
- `tol`: how close to the paper's value counts as *reproduced* (absolute, or `N%` of the paper's value).
- `noise`: the quantity's spread, a standard deviation: an expression over references to the rows a chapter
  writes with `hanzilm.spread` on every run (seeds, or the bootstrap over test items), never a typed number
  (`quad(a, b, ...)`: the sd of a sum or difference of independent measurements); the row's `source` column says
  how it was measured (`noise_source` where a row has none).
- `untested`: why a claim cannot be tested at all (e.g. the data could not be obtained).
- `requires`: the scale gate, what the run must reach before the claim says anything, and why, as
  `QUANTITY OP NUMBER | why` (e.g. enough training characters for the model to have learned the skill the
  claim compares, enough seeds for a spread over them, or a quantity that no longer moves with training by
  more than its spread); short of it the claim is *inconclusive*, the why (too small a scale, too few seeds) and
  our value beside the bar. The why may quote result rows (`{chapter/table:metric[...]}`, e.g. our training
  tokens beside the paper's).
- `independent`: `yes` when the quantity's sides are separate measurements (two models each scored on the same
  items), so that an equal value on both sides is a tie, an effect of zero, not one number copied into two rows.

Verdicts of a finding: **reproduced** (within `tol` of the paper's value, in the stated direction),
**holds** (the direction or ordering only; or a value beyond the paper's on its better side), **inconclusive**
(the effect is within `RESOLVES` times its measured spread, its spread is not measured, or the run is short of
the claim's scale gate: the row says which), **fails** (contradicted beyond its spread), **not tested** (with
the reason). A check *agrees* or *differs*. The same numbers used as evidence by two claims count once; a
comparison whose two sides are the same number (two selections that picked the same checkpoints) tests nothing.
"""

from __future__ import annotations

import ast
import csv
import math
import operator
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .errors import HanzilmError
from .paths import REPLICATES
from .results import TARGETS, read_results

CLAIMS = TARGETS / "claims.csv"
VERDICTS = ("reproduced", "holds", "inconclusive", "fails", "not tested")   # of a finding
CHECKS = ("agrees", "differs", "not tested")                                # of a check
KINDS = ("finding", "check")
# an effect resolves when it is more than twice its spread (a standard deviation) from the claim's bar
RESOLVES = 2.0
PAPERS = {"backpack": "Sun & Hewitt 2023 (Backpack)", "mslm": "Downey et al. 2021 (MSLM)",
          "mmtnn": "Pei, Ge & Chang 2014 (MMTNN)"}
FIELDS = ("id", "paper", "table", "cites", "kind", "basis", "claim", "quote", "quantity", "expect", "better",
          "paper_value", "tol", "noise", "noise_source", "requires", "independent", "untested", "headline", "note")
# what a row rests on: a sentence of the paper, a cell it prints, a number rebuilt from the authors' files, an
# ordering or difference we derived from the paper's numbers, or the setting (data sizes, parameter counts)
BASES = ("text", "table", "rebuilt", "derived", "setting")

_REF = re.compile(r"\{([^{}]+)\}")
_EXPECT = re.compile(r"^\s*(>=|<=|>|<)\s*(-?[0-9.]+)\s*$")
_COMPARE = {">": operator.gt, "<": operator.lt, ">=": operator.ge, "<=": operator.le}
_REQUIRES = re.compile(r"^(.*?)\s*(>=|<=|>|<)\s*(-?[0-9.eE+]+)\s*$")


@dataclass(frozen=True)
class Ref:
    table: str
    metric: str
    where: tuple[tuple[str, str], ...]

    @classmethod
    def parse(cls, text: str, at: str) -> "Ref":
        m = re.fullmatch(r"\s*([\w-]+/[\w-]+):([^\[\]]+?)\s*(?:\[(.*)\])?\s*", text)
        if not m:
            raise HanzilmError(f"{at}: reference {{{text}}} is not chapter/table:metric[key=value; ...]")
        where = []
        # a value may itself hold "; " (a model named "NN (Zheng-style; transition scores)"): split only before key=
        for part in filter(None, (p.strip() for p in re.split(r";(?=[^;=\]]+=)", m.group(3) or ""))):
            key, eq, value = part.partition("=")
            if not eq:
                raise HanzilmError(f"{at}: reference {{{text}}}: {part!r} is not key=value")
            where.append((key.strip(), value.strip()))
        return cls(m.group(1), m.group(2).strip(), tuple(where))

    @property
    def label(self) -> str:
        return " · ".join([v for _, v in self.where] + [self.metric])

    def row(self, tables: dict[str, pd.DataFrame], at: str) -> pd.Series | None:
        """The one row this reference names, or None when the run did not compute it."""
        df = tables.get(self.table)
        if df is None:
            return None
        mask = df["metric"].astype(str) == self.metric
        for key, value in self.where:
            if key not in df:
                raise HanzilmError(f"{at}: {self.table} has no column {key!r} (columns: {list(df.columns)})")
            mask &= df[key].astype(str) == value
        rows = df[mask]
        if len(rows) > 1:
            raise HanzilmError(f"{at}: {{{self}}} matches {len(rows)} rows of {self.table}; name more keys")
        return None if rows.empty else rows.iloc[0]

    def __str__(self) -> str:
        keys = "; ".join(f"{k}={v}" for k, v in self.where)
        return f"{self.table}:{self.metric}" + (f"[{keys}]" if keys else "")


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str
    table: str
    claim: str
    quantity: str
    cites: str = ""
    kind: str = "finding"
    expect: str = ""
    better: str = ""
    paper_value: str = ""
    tol: str = ""
    noise: str = ""
    noise_source: str = ""
    requires: str = ""
    independent: str = ""
    untested: str = ""
    note: str = ""
    basis: str = ""
    quote: str = ""
    headline: str = ""

    def refs(self) -> list[Ref]:
        return [Ref.parse(t, f"claim {self.id}") for t in _REF.findall(self.quantity)]

    def noise_refs(self) -> list[Ref]:
        return [Ref.parse(t, f"claim {self.id} (noise)") for t in _REF.findall(self.noise)]

    def requirement(self) -> tuple[str, str, float, str] | None:
        """`requires` split: (quantity, operator, threshold, why), or None."""
        if not self.requires:
            return None
        condition, bar, why = self.requires.partition("|")
        m = _REQUIRES.match(condition)
        if not bar or not why.strip() or m is None:
            raise HanzilmError(f"claim {self.id}: requires {self.requires!r} is not like "
                               "'{{table:metric[...]}} >= 4000000 | why'")
        quantity, op, threshold = m.groups()
        return quantity.strip(), op, float(threshold), why.strip()

    def requirement_refs(self) -> list[Ref]:
        return [Ref.parse(t, f"claim {self.id} (requires)") for t in _REF.findall(self.requirement()[0])]


def load_claims(path: Path = CLAIMS) -> list[Claim]:
    """The registry, checked: known papers, unique ids, parseable quantities and directions."""
    if not path.is_file():
        raise HanzilmError(f"{path}: no claims registry")
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != FIELDS:
            raise HanzilmError(f"{path}: header must be {','.join(FIELDS)}; got {reader.fieldnames}")
        claims, seen = [], set()
        for line, row in enumerate(reader, start=2):
            at = f"{path}:{line}"
            if None in row or any(v is None for v in row.values()):
                raise HanzilmError(f"{at}: expected {len(FIELDS)} fields")
            c = Claim(**{k: (v or "").strip() for k, v in row.items()})
            if c.paper not in PAPERS:
                raise HanzilmError(f"{at}: unknown paper {c.paper!r} (one of {sorted(PAPERS)})")
            if c.id in seen:
                raise HanzilmError(f"{at}: duplicate claim id {c.id!r}")
            seen.add(c.id)
            if not c.quantity and not c.untested:
                raise HanzilmError(f"{at}: claim {c.id} has neither a quantity nor a reason it is untested")
            if c.independent not in ("", "yes"):
                raise HanzilmError(f"{at}: independent is 'yes' or empty, not {c.independent!r}")
            if c.kind not in KINDS:
                raise HanzilmError(f"{at}: kind is one of {', '.join(KINDS)}, not {c.kind!r}")
            if c.better not in ("", "higher", "lower") or (c.better and c.expect):
                raise HanzilmError(f"{at}: better is 'higher' or 'lower', and only for a claim without expect")
            if c.noise and not _REF.search(c.noise):
                raise HanzilmError(f"{at}: noise {c.noise!r} is a typed number: a spread is read from the results "
                                   "(a reference to the rows hanzilm.spread writes)")
            if c.expect and not _EXPECT.match(c.expect):
                raise HanzilmError(f"{at}: expect {c.expect!r} is not like '> 0'")
            if c.quantity:
                try:
                    c.refs(), _compile(c.quantity)
                    if c.noise:
                        c.noise_refs(), _compile(c.noise)
                    if c.requires:
                        c.requirement_refs(), _compile(c.requirement()[0])
                except HanzilmError as e:
                    raise HanzilmError(f"{at}: {e}") from None
            claims.append(c)
    return claims


def evaluate(profile: str, claims: list[Claim] | None = None,
             tables: dict[str, pd.DataFrame] | None = None, require_all: bool = True) -> pd.DataFrame:
    """One row per claim: its verdict on `results/<profile>/` (or on `tables`), ours and the paper's value, and
    why. require_all: a table the claims read that is absent altogether is an error (see _require_tables)."""
    claims = load_claims() if claims is None else claims
    tables = read_results(profile) if tables is None else tables
    if require_all:
        _require_tables(claims, tables, profile)
    rows, evidence_of = [], {}
    for c in claims:
        r = _judge(c, tables, profile)
        key = r.pop("_evidence")
        if key is not None and r["verdict"] != "not tested":
            values, rows_used = key
            first = evidence_of.setdefault(values, (c.id, rows_used))
            if first[1] != rows_used:  # other rows holding the very same numbers: copies, not new evidence
                r.update(verdict="not tested", why=f"the same numbers as claim {first[0]} (copied rows), counted there")
        rows.append({"id": c.id, "paper": c.paper, "table": c.table, "cites": c.cites, "kind": c.kind,
                     "claim": c.claim, **r, "note": c.note, "basis": c.basis, "quote": c.quote,
                     "headline": c.headline})
    return pd.DataFrame(rows, columns=["id", "paper", "table", "cites", "kind", "claim", "verdict", "ours",
                                       "paper_value", "tol", "spread", "spread_source", "evidence", "why", "note",
                                       "basis", "quote", "headline"])


# the replicates of a chapter's run (results/<profile>/replicates/<name>/<chapter>/*.csv): the same chapter run
# again differing only in the CPU's arithmetic (fp32 where the book used bf16) or in the seed
FAVOURABLE, UNFAVOURABLE = {"reproduced", "holds"}, {"fails"}


def stability(profile: str, tables: dict[str, pd.DataFrame] | None = None,
              verdicts: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each replicate's verdicts beside the book run's (`verdicts`, evaluated here unless given), claim by claim,
    for the chapter it re-ran (the other chapters' tables are the book run's): `flip` where one run says
    reproduced/holds and the other fails."""
    from .results import RESULTS

    tables = read_results(profile) if tables is None else tables
    book = (evaluate(profile, tables=tables) if verdicts is None else verdicts).set_index("id")
    deciding = _deciding()
    rows = []
    for chapter_dir in sorted((RESULTS / profile / REPLICATES).glob("*/*")):
        name, chapter = chapter_dir.parent.name, chapter_dir.name
        again = {**tables, **{f"{chapter}/{p.stem}": pd.read_csv(p) for p in sorted(chapter_dir.glob("*.csv"))}}
        other = evaluate(profile, tables=again).set_index("id")
        for i in book.index[book.paper == chapter]:
            a, b = book.at[i, "verdict"], other.at[i, "verdict"]
            rows.append({"replicate": name, "chapter": chapter, "id": i, "decides": deciding.get(i, ""),
                         "book": a, "replicate_verdict": b,
                         "book_value": book.at[i, "ours"], "book_spread": book.at[i, "spread"],
                         "replicate_value": other.at[i, "ours"], "replicate_spread": other.at[i, "spread"],
                         "moved": a != b, "flip": {a, b} & FAVOURABLE != set() and {a, b} & UNFAVOURABLE != set()})
    return pd.DataFrame(rows, columns=["replicate", "chapter", "id", "decides", "book", "replicate_verdict",
                                       "book_value", "book_spread", "replicate_value", "replicate_spread", "moved",
                                       "flip"])


def settle(verdicts: pd.DataFrame, stable: pd.DataFrame) -> pd.DataFrame:
    """The verdicts that survive their replicates: a claim whose verdict moved between the book's run and a
    replicate (`stability`) is not settled by either. Where every run reads reproduced or holds, it holds (the
    direction agreed, the size did not); otherwise it is inconclusive; the why gives each run's value."""
    moved = stable[stable.moved.astype(bool)]   # (an empty object column would select columns, not rows)
    out = verdicts.copy()
    for claim_id, runs in moved.groupby("id", sort=False):
        i = out.index[out.id == claim_id][0]
        seen = {out.at[i, "verdict"], *runs.replicate_verdict}
        each = "; ".join(f"the {r.replicate} replicate {r.replicate_verdict} "
                         f"({_with_spread(r.replicate_value, r.replicate_spread)})" for r in runs.itertuples())
        book = f"the book's run {out.at[i, 'verdict']} ({_with_spread(out.at[i, 'ours'], out.at[i, 'spread'])})"
        settled = "holds" if seen <= FAVOURABLE else "inconclusive"
        out.at[i, "verdict"] = settled
        out.at[i, "why"] = (f"not settled across seeds: {book}, {each}"
                            + ("; the direction holds in every run" if settled == "holds" else ""))
    return out


def stability_long(stable: pd.DataFrame) -> pd.DataFrame:
    """`stability` as a results table (`write_results`): one row per replicate and claim, `ours` 1 on a flip."""
    return stable.assign(metric="flip", ours=stable.flip.astype(int)).drop(columns=["flip"])


def stability_html(stable: pd.DataFrame) -> str:
    """Per replicate: its claims, how many verdicts moved and how many flipped; then every claim that moved."""
    from html import escape

    rule = ("<p>A <i>flip</i> is a claim that reads reproduced or holds in one run and fails in the other; every "
            "other change of verdict is a move. A claim that moves is settled by neither run: the verdicts of this "
            "page, the headlines' among them, are the settled ones, the same for the book's run and its "
            "replicates.</p>")
    if stable.empty:
        return f"<div class='hanzilm-verdicts'>{rule}<p>No replicate has been run at this profile yet.</p></div>"
    stable = stable.assign(headline_moved=stable.moved & stable.decides.astype(bool))
    summary = stable.groupby(["replicate", "chapter"]).agg(claims=("id", "size"), moved=("moved", "sum"),
                                                           flips=("flip", "sum"),
                                                           **{"of them deciding a headline": ("headline_moved",
                                                                                              "sum")}).reset_index()
    moved = stable[stable.moved]
    rows = "".join(f"<tr><td>{escape(r.replicate)}</td><td>{escape(r.id)}"
                   + (f" (decides {escape(r.decides)})" if r.decides else "") + "</td>"
                   f"<td>{r.book} ({_with_spread(r.book_value, r.book_spread)})</td>"
                   f"<td>{r.replicate_verdict} ({_with_spread(r.replicate_value, r.replicate_spread)})</td>"
                   f"<td>{'flip' if r.flip else ''}</td></tr>" for r in moved.itertuples())
    return (f"<div class='hanzilm-verdicts'>{rule}{summary.to_html(index=False)}"
            "<p>Every claim that moved, its verdict and value (± its sd) in the book's run and in the replicate:</p>"
            "<table class='dataframe'><thead><tr><th>replicate</th><th>claim</th><th>book</th><th>replicate</th>"
            f"<th></th></tr></thead><tbody>{rows}</tbody></table></div>")


def _with_spread(value: float, sd: float) -> str:
    return _fmt(value) + ("" if math.isnan(sd) else f" ± {_fmt(sd)}")


def _require_tables(claims: list[Claim], tables: dict[str, pd.DataFrame], profile: str) -> None:
    """A table the registry reads that is absent altogether means a chapter has not been run at this profile (the
    results of `smoke` are not committed): its claims would read as "not tested" and its numbers drop out of the
    glance table without a word, so say so instead. A row a table lacks is a verdict, not this error."""
    refs = [r for c in claims if not c.untested for r in c.refs() + (c.requirement_refs() if c.requires else [])]
    absent = sorted({r.table for r in refs} - set(tables))
    if absent:
        chapters = sorted({t.split("/")[0] for t in absent})
        raise HanzilmError(
            f"results/{profile}/ has no {', '.join(f'{t}.csv' for t in absent)}, which the claims registry reads: "
            f"run {'that chapter' if len(chapters) == 1 else 'those chapters'} at this profile first ("
            + "; ".join(f"hanzilm paper run --profile {profile} --only '{ch}/'" for ch in chapters) + ")")


def counts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Verdict counts of the findings per paper (rows in PAPERS order, columns in VERDICTS order), and the checks
    apart: how many agree with the paper's setting out of how many."""
    findings = verdicts[verdicts["kind"] == "finding"]
    t = pd.crosstab(findings["paper"], findings["verdict"]).reindex(index=list(PAPERS), columns=list(VERDICTS))
    t = t.fillna(0).astype(int)
    t["findings"] = t.sum(axis=1)
    checks = verdicts[verdicts["kind"] == "check"]
    agree = checks[checks.verdict == "agrees"].groupby("paper").size().reindex(list(PAPERS)).fillna(0).astype(int)
    total = checks.groupby("paper").size().reindex(list(PAPERS)).fillna(0).astype(int)
    t["checks agreeing"] = [f"{a} of {n}" for a, n in zip(agree, total)]
    t.index = [PAPERS[p] for p in t.index]
    return t


def counts_html(verdicts: pd.DataFrame) -> str:
    """`counts` as registry output (REGISTRY_CLASSES)."""
    return f"<div class='hanzilm-verdicts'>{counts(verdicts).to_html()}</div>"


def _judge(c: Claim, tables: dict[str, pd.DataFrame], profile: str) -> dict:
    out = {"ours": math.nan, "paper_value": math.nan, "tol": c.tol, "spread": math.nan, "spread_source": "",
           "evidence": "", "why": "", "_evidence": None}
    if c.untested:
        return {**out, "verdict": "not tested", "why": c.untested}
    at = f"claim {c.id}"
    short = _short_of(c, tables, at) if c.kind == "finding" else ""
    refs = c.refs()
    rows = [ref.row(tables, at) for ref in refs]
    missing = [str(ref) for ref, row in zip(refs, rows) if row is None or pd.isna(row["ours"])]
    if missing:
        return {**out, "verdict": "inconclusive", "why": short} if short else {
            **out, "verdict": "not tested", "why": f"not computed at profile {profile}: {', '.join(missing)}"}
    ours = [float(row["ours"]) for row in rows]
    papers = [float(row["paper"]) if "paper" in row and pd.notna(row["paper"]) else math.nan for row in rows]
    q = _compute(c.quantity, ours)
    pq = float(c.paper_value) if c.paper_value else _compute(c.quantity, papers)
    # whole numbers (counts, ranks) can agree by chance; two equal fractional values are one number copied
    copied = frozenset(v for v in ours if not v.is_integer())
    spread, source = _spread(c, tables, at)
    out.update(ours=q, paper_value=pq, spread=spread, spread_source=source,
               _evidence=(copied, frozenset(map(str, refs))) if copied else None,
               evidence="; ".join(f"{ref.label} {_fmt(o)}" + (f" (paper {_fmt(p)})" if not math.isnan(p) else "")
                                  for ref, o, p in zip(refs, ours, papers)))
    same = [(i, j) for i in range(len(refs)) for j in range(i + 1, len(refs))
            if refs[i] != refs[j] and ours[i] == ours[j] and not ours[i].is_integer() and not c.independent]
    if same:
        i, j = same[0]
        return {**out, "verdict": "not tested", "_evidence": None,
                "why": f"both sides are the same number, {_fmt(ours[i])}: one is a copy of the other (see the "
                       "evidence), so the claim tests nothing"}
    if c.kind == "check":
        return {**out, **_check(q, pq, c.tol)}
    if short:
        return {**out, "verdict": "inconclusive", "why": short}
    judged = _comparative(c, q, pq, spread, source) if c.expect else _value_claim(c, q, pq, spread)
    return {**out, **judged}


def _check(q: float, pq: float, tol: str) -> dict:
    if math.isnan(pq):
        return {"verdict": "not tested", "why": "the paper's value was not recovered"}
    if _within(q, pq, tol):
        return {"verdict": "agrees", "why": f"within {tol} of the paper's {_fmt(pq)}"}
    return {"verdict": "differs", "why": f"ours {_fmt(q)}, the paper's {_fmt(pq)} (tolerance {tol})"}


def _comparative(c: Claim, q: float, pq: float, spread: float, source: str) -> dict:
    """A direction the paper states (`expect`): resolved only beyond RESOLVES times the measured spread."""
    op, bar = _EXPECT.match(c.expect).groups()
    effect = q - float(bar)
    if math.isnan(spread):
        return {"verdict": "inconclusive",
                "why": f"{_fmt(q)} ({c.expect.strip()} as the paper states: "
                       f"{'yes' if _COMPARE[op](q, float(bar)) else 'no'}), but its spread is not measured at "
                       "this profile"}
    if abs(effect) <= RESOLVES * spread:
        return {"verdict": "inconclusive",
                "why": f"within its spread: the effect {_fmt(effect)} is within {RESOLVES:g} × its sd "
                       f"{_fmt(spread)} ({source})"}
    if not _COMPARE[op](q, float(bar)):
        return {"verdict": "fails", "why": f"contradicted: {_fmt(q)}, not {c.expect.strip()}, beyond "
                                           f"{RESOLVES:g} × its sd {_fmt(spread)}"}
    if _within(q, pq, c.tol) and not _wider_than_tol(pq, c.tol, spread):
        why = f"within {c.tol} of the paper's {_fmt(pq)}"
        return {"verdict": "reproduced", "why": why + _near_edge(q, pq, c.tol, spread)}
    size = (f"; within {c.tol} of the paper's {_fmt(pq)}, but its sd {_fmt(spread)} is wider than that tolerance"
            if _within(q, pq, c.tol) else
            f"; the paper's value {_fmt(pq)} is not within {c.tol}" if c.tol and not math.isnan(pq) else "")
    return {"verdict": "holds", "why": f"{c.expect.strip()} as the paper states, beyond {RESOLVES:g} × its sd{size}"}


def _wider_than_tol(pq: float, tol: str, spread: float) -> bool:
    """A spread wider than the tolerance: the run could have landed anywhere in it, so being inside says nothing."""
    return bool(tol) and not math.isnan(spread) and spread > _bound(pq, tol)


def _value_claim(c: Claim, q: float, pq: float, spread: float) -> dict:
    """A value alone: within the tolerance, beyond the paper's on its better side, or off."""
    if math.isnan(pq):
        return {"verdict": "not tested", "why": "the paper's value was not recovered"}
    if _within(q, pq, c.tol):
        if _wider_than_tol(pq, c.tol, spread):
            return {"verdict": "inconclusive", "why": f"within {c.tol} of the paper's {_fmt(pq)}, but its sd "
                                                      f"{_fmt(spread)} is wider than that tolerance"}
        why = (f"equals the paper's {_fmt(pq)}" if float(c.tol.rstrip("%")) == 0
               else f"within {c.tol} of the paper's {_fmt(pq)}")
        return {"verdict": "reproduced", "why": why + _near_edge(q, pq, c.tol, spread)}
    if (c.better == "higher" and q > pq) or (c.better == "lower" and q < pq):
        return {"verdict": "holds", "why": f"{'above' if q > pq else 'below'} the paper's {_fmt(pq)} by "
                                           f"{_fmt(abs(q - pq))}, on its better side, beyond {c.tol}"}
    # off on the worse side: a fail once the distance from the paper's value is beyond the spread, whichever side
    # of the tolerance's edge the spread reaches
    if not math.isnan(spread) and abs(q - pq) <= RESOLVES * spread:
        return {"verdict": "inconclusive", "why": f"outside {c.tol} of the paper's {_fmt(pq)}, but within "
                                                  f"{RESOLVES:g} × its sd {_fmt(spread)} of it"}
    beyond = "" if math.isnan(spread) else f", {_fmt(abs(q - pq) / spread)} sd from it"
    return {"verdict": "fails", "why": f"ours {_fmt(q)} is not within {c.tol} of the paper's {_fmt(pq)}{beyond}"
                                       + _near_edge(q, pq, c.tol, spread)}


def _short_of(c: Claim, tables: dict[str, pd.DataFrame], at: str) -> str:
    """Why the run falls short of the claim's requirement ("" if it meets it or has none)."""
    requirement = c.requirement()
    if requirement is None:
        return ""
    quantity, op, threshold, why = requirement
    value = _value(quantity, c.requirement_refs(), tables, at)
    why = _REF.sub(lambda m: _fmt(_value(m.group(0), [Ref.parse(m.group(1), at)], tables, at)), why)
    if math.isnan(value):
        return f"not resolved at this profile: {why}: not computed"
    if _COMPARE[op](value, threshold):
        return ""
    return f"not resolved at this profile: {why}: ours {_fmt(value)}, needs {op} {_fmt(threshold)}"


def _spread(c: Claim, tables: dict[str, pd.DataFrame], at: str) -> tuple[float, str]:
    """The claim's spread on `tables` and how it was measured (the rows' `source`, else `noise_source`)."""
    if not c.noise:
        return math.nan, ""
    refs = c.noise_refs()
    if any(r.table not in tables for r in refs):  # the chapter ran before it measured this spread
        return math.nan, ""
    value = abs(_value(c.noise, refs, tables, at))
    sources = [str(row["source"]) for row in (r.row(tables, at) for r in refs)
               if row is not None and "source" in row and pd.notna(row["source"])]
    return value, "; ".join(dict.fromkeys(sources)) or c.noise_source


def quantity_of(c: Claim, tables: dict[str, pd.DataFrame]) -> float:
    """The claim's quantity on `tables` (nan where a row it reads is missing): what its verdict judges."""
    return _value(c.quantity, c.refs(), tables, f"claim {c.id}")


def _value(expression: str, refs: list[Ref], tables: dict[str, pd.DataFrame], at: str) -> float:
    rows = [ref.row(tables, at) for ref in refs]
    if any(row is None or pd.isna(row["ours"]) for row in rows):
        return math.nan
    return _compute(expression, [float(row["ours"]) for row in rows])


def _bound(pq: float, tol: str) -> float:
    """The largest distance from the paper's value `pq` that `tol` ("0.05" or "50%") allows."""
    return float(tol[:-1]) / 100 * abs(pq) if tol.endswith("%") else float(tol)


def _near_edge(q: float, pq: float, tol: str, spread: float) -> str:
    """" (inside it by m, ...)" when `q` is nearer the edge of the paper's tolerance than the run-to-run spread, so
    that another training could land on the other side of it; "" otherwise (or without a tolerance or spread)."""
    if not tol or math.isnan(pq) or math.isnan(spread):
        return ""
    margin = _bound(pq, tol) - abs(q - pq)
    if abs(margin) >= spread:
        return ""
    side, other = ("inside", "outside") if margin >= 0 else ("outside", "inside")
    return (f" ({side} it by {_fmt(abs(margin))}, less than its sd {_fmt(spread)}: another training or test "
            f"sample may fall {other})")


def _within(q: float, pq: float, tol: str) -> bool:
    if not tol or math.isnan(pq):
        return False
    return abs(q - pq) <= _bound(pq, tol)


def _compute(expression: str, values: list[float]) -> float:
    return _eval(_compile(expression), values)


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
def quad(*sds: float) -> float:
    """The sd of a sum or difference of independent measurements: the root of the sum of their squared sds."""
    return math.sqrt(sum(sd * sd for sd in sds))


_FUNCS = {"min": min, "max": max, "abs": abs, "sqrt": math.sqrt, "quad": quad}


def _compile(expression: str) -> ast.expr:
    """Parse a quantity with each {reference} replaced by a placeholder; only arithmetic is allowed."""
    n = iter(range(10_000))
    text = _REF.sub(lambda _: f"_r{next(n)}", expression)
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as e:
        raise HanzilmError(f"quantity {expression!r} is not an expression: {e.msg}") from None
    for node in ast.walk(tree):
        ok = isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Call, ast.Load, ast.USub,
                               *_OPS)) and not (isinstance(node, ast.Name) and not
                                                (node.id.startswith("_r") or node.id in _FUNCS))
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in _FUNCS):
            ok = False
        if not ok:
            raise HanzilmError(f"quantity {expression!r}: {ast.unparse(node)!r} is not allowed")
    return tree


def _eval(node: ast.expr, values: list[float]) -> float:
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        return values[int(node.id[2:])]
    if isinstance(node, ast.UnaryOp):
        return -_eval(node.operand, values)
    if isinstance(node, ast.Call):
        return float(_FUNCS[node.func.id](*(_eval(a, values) for a in node.args)))
    left, right = _eval(node.left, values), _eval(node.right, values)
    if isinstance(node.op, ast.Div) and right == 0:
        return math.nan
    return _OPS[type(node.op)](left, right)


def _fmt(x: float) -> str:
    if math.isnan(x):
        return "n/a"
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"


# ------------------------------------------------------------------ the headlines: each paper's main findings

HEADLINES = TARGETS / "headlines.csv"
HEADLINE_FIELDS = ("id", "paper", "headline", "quote", "cites", "decided_by")
ANSWERED = ("reproduced", "holds", "fails")   # a verdict that answers the paper's question, either way
_SEEDS = re.compile(r"sd over (\d+) seeds")


@dataclass(frozen=True)
class Headline:
    """One of a paper's main findings (its abstract, conclusion, the sentences its results lead with): its
    verdict is that of the one registry row in the paper's own words that decides it (`decided_by`)."""
    id: str
    paper: str
    headline: str
    quote: str
    cites: str
    decided_by: str


def _deciding(path: Path = HEADLINES) -> dict[str, str]:
    """{claim id: the headline it decides} (none without a headlines file)."""
    if not path.is_file():
        return {}
    with path.open(encoding="utf-8", newline="") as f:
        return {row["decided_by"]: row["id"] for row in csv.DictReader(f)}


def load_headlines(path: Path = HEADLINES, claims: list[Claim] | None = None) -> list[Headline]:
    """The headlines, checked against the registry: each decided by a finding in the paper's words (basis text)
    that names the headline as its own."""
    by_id = {c.id: c for c in (load_claims() if claims is None else claims)}
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != HEADLINE_FIELDS:
            raise HanzilmError(f"{path}: header must be {','.join(HEADLINE_FIELDS)}; got {reader.fieldnames}")
        out = []
        for line, row in enumerate(reader, start=2):
            h = Headline(**{k: (v or "").strip() for k, v in row.items()})
            c = by_id.get(h.decided_by)
            problem = ("unknown paper" if h.paper not in PAPERS else
                       f"decided_by {h.decided_by!r} is not a claim of the registry" if c is None else
                       f"its deciding claim {c.id} is of paper {c.paper}" if c.paper != h.paper else
                       f"its deciding claim {c.id} is a {c.kind}, not a finding in the paper's words (basis "
                       f"{c.basis or 'empty'})" if c.kind != "finding" or c.basis != "text" else
                       f"its deciding claim {c.id} sits under headline {c.headline or '(none)'}"
                       if c.headline != h.id else
                       "no headline or quote" if not (h.headline and h.quote) else "")
            if problem:
                raise HanzilmError(f"{path}:{line}: headline {h.id}: {problem}")
            out.append(h)
    return out


def headlines(verdicts: pd.DataFrame, profile: str, heads: list[Headline] | None = None,
              claims: list[Claim] | None = None, tables: dict[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """One row per headline: the verdict of the claim that decides it, a one-line reason made of that claim's
    numbers and verdict, what would resolve it where it is not answered, and the verdicts of the rows under it."""
    claims = load_claims() if claims is None else claims
    heads = load_headlines(claims=claims) if heads is None else heads
    tables = read_results(profile) if tables is None else tables
    by_id, v = {c.id: c for c in claims}, verdicts.set_index("id")
    rows = []
    for h in heads:
        r = v.loc[h.decided_by]
        under = v[(v.index.map(lambda i: by_id[i].headline) == h.id) & (v.index != h.decided_by)
                  & (v.kind == "finding")]
        rows.append({"id": h.id, "paper": h.paper, "headline": h.headline, "quote": h.quote, "cites": h.cites,
                     "decided_by": h.decided_by, "verdict": r.verdict, "answered": r.verdict in ANSWERED,
                     "reason": _reason(r), "to_resolve": _to_resolve(by_id[h.decided_by], r, tables, profile),
                     "supporting": ", ".join(f"{n} {verdict}" for verdict, n in
                                             under.verdict.value_counts().reindex(VERDICTS).dropna().astype(int).items())})
    return pd.DataFrame(rows)


def _reason(r: pd.Series) -> str:
    """A verdict's reason in a line: our value beside the paper's and its spread, then the registry's why without
    its asides (the claim's row keeps them)."""
    why = _plain(r.why)
    if math.isnan(r.ours):
        return why
    paper = "" if math.isnan(r.paper_value) else f" (the paper's {_fmt(r.paper_value)})"
    spread = "" if math.isnan(r.spread) else f" ± {_fmt(r.spread)}"
    return f"ours {_fmt(r.ours)}{spread}{paper}: {why}"


def _plain(why: str) -> str:
    """`why` without its parentheses (the spread's source, a gate's formula) and spaces before punctuation."""
    while (shorter := re.sub(r"\s*\([^()]*\)", "", why)) != why:
        why = shorter
    return re.sub(r"\s+([,;:.])", r"\1", why)


def _to_resolve(c: Claim, r: pd.Series, tables: dict[str, pd.DataFrame], profile: str) -> str:
    """What would resolve an unanswered verdict, and what it would cost at this profile's measured speed: the
    training the scale gate asks for, or the seeds (test items) that would bring the spread below the effect."""
    if r.verdict in ANSWERED or c.untested:
        return ""
    hours = _run_hours(c, profile)
    requirement = c.requirement() if c.requires else None
    if requirement and "not resolved at this profile" in r.why:
        _, op, threshold, _ = requirement
        value = _value(requirement[0], c.requirement_refs(), tables, f"claim {c.id}")
        if op in (">=", ">") and value > 0 and re.search(r":(train_chars|\w*tokens)\b", requirement[0]):
            factor = threshold / value
            cost = f"; at our measured speed about {_fmt(hours * factor)} CPU-hours a run" if hours else ""
            return f"{_fmt(factor)} times the training (to {_fmt(threshold)} from our {_fmt(value)}){cost}"
        if math.isnan(value):
            return "runs that measure the gate's quantity (it is not measured at this profile)"
        if "too small a scale" in requirement[3]:
            return (f"longer training, until the gate's quantity is {op} {_fmt(threshold)} (ours {_fmt(value)}); "
                    "how much longer the runs do not say")
        return f"runs that meet the gate: its quantity {op} {_fmt(threshold)} (ours {_fmt(value)})"
    if math.isnan(r.spread):
        return "a measured spread: seeds, or a bootstrap over its test items"
    needed = _needed_sd(c, r)
    if needed == 0:
        return "none at this size: the effect is nil, so no number of seeds separates it from the bar"
    ratio = (r.spread / needed) ** 2
    if ratio <= 1:  # its spread resolves it: the verdict was unsettled by a replicate that read it otherwise
        return (f"more seeds, read together with the replicates': its sd {_fmt(r.spread)} is within the "
                f"{_fmt(needed)} that resolves this value, but the runs at other seeds read it otherwise")
    seeds = _SEEDS.search(r.spread_source or "")
    if seeds:
        n = int(seeds.group(1))
        more = math.ceil(n * ratio) - n
        cost = f", about {_fmt(hours * more * len(c.refs()))} CPU-hours" if hours else ""
        return (f"its sd below {_fmt(needed)}: about {math.ceil(n * ratio)} seeds a cell where it has {n}, if the "
                f"effect stays ({more} more a cell{cost})")
    return f"its sd below {_fmt(needed)}: a test sample about {_fmt(ratio)} times larger, if the effect stays"


def _needed_sd(c: Claim, r: pd.Series) -> float:
    """The spread under which the claim's present value would be resolved."""
    if c.expect:
        return abs(r.ours - float(_EXPECT.match(c.expect).group(2))) / RESOLVES
    if _within(r.ours, r.paper_value, c.tol):
        return _bound(r.paper_value, c.tol)
    return abs(r.ours - r.paper_value) / RESOLVES


def _run_hours(c: Claim, profile: str) -> float:
    """The mean wall time, in hours, of the training runs behind the first table the claim reads (its provenance
    record), 0 where none is recorded, and at smoke: its seconds are noise, and its pages must print the same on
    every run (nbval compares them)."""
    import json

    from .results import RESULTS

    if profile == "smoke":
        return 0.0
    record = RESULTS / profile / f"{c.refs()[0].table}.json"
    runs = json.loads(record.read_text(encoding="utf-8")).get("training_runs", []) if record.is_file() else []
    times = [float(run["wall_time_s"]) for run in runs if run.get("wall_time_s")]
    return sum(times) / len(times) / 3600 if times else 0.0


def headlines_html(heads: pd.DataFrame, paper: str | None = None) -> str:
    """The headline table (one paper's, or every paper's with the paper named): the finding in a plain sentence
    with the paper's words beneath, its verdict, the reason, what would resolve it, and the rows under it."""
    from html import escape

    rows = []
    for h in (heads if paper is None else heads[heads.paper == paper]).itertuples():
        if paper is None and (not rows or h.paper != last):
            rows.append(f"<tr><td colspan='5' style='background:#f6f8fa;font-weight:600'>{escape(PAPERS[h.paper])}"
                        "</td></tr>")
        last = h.paper
        rows.append(
            f"<tr><td>{escape(h.headline)}<br><span style='color:#57606a;font-size:0.9em'>“{escape(h.quote)}” "
            f"({escape(h.cites)})</span></td>"
            f"<td><b style='color:{_COLOURS[h.verdict]}'>{h.verdict}</b><br><span style='color:#57606a;"
            f"font-size:0.85em'>{escape(h.decided_by)}</span></td>"
            f"<td>{escape(h.reason)}</td><td>{escape(h.to_resolve)}</td><td>{escape(h.supporting)}</td></tr>")
    widths = (34, 11, 27, 17, 11)
    return ("<table class='hanzilm-claims' style='width:100%;table-layout:fixed;border-collapse:collapse;"
            "font-size:0.85em;line-height:1.35'><colgroup>" + "".join(f"<col style='width:{w}%'>" for w in widths)
            + "</colgroup><thead><tr><th>the paper's finding</th><th>verdict</th><th>why</th>"
            "<th>what would resolve it</th><th>the rows under it</th></tr></thead>"
            "<tbody style='vertical-align:top;overflow-wrap:break-word'>" + "".join(rows) + "</tbody></table>")


def headlines_long(heads: pd.DataFrame) -> pd.DataFrame:
    """`headlines` as a results table (`write_results`): one row per headline, `ours` 1 where it is answered."""
    return (heads.rename(columns={"paper": "chapter"}).assign(metric="answered", ours=heads.answered.astype(int))
            [["id", "chapter", "decided_by", "verdict", "metric", "ours", "reason", "to_resolve", "supporting"]])


def headline_counts(heads: pd.DataFrame) -> pd.DataFrame:
    """Per paper: its headline findings, how many the runs answer (reproduced, holds or fails) and how many not."""
    t = heads.groupby("paper").agg(headlines=("id", "size"), answered=("answered", "sum")).reindex(list(PAPERS))
    t = t.fillna(0).astype(int)
    t["not answered"] = t.headlines - t.answered
    t.index = [PAPERS[p] for p in t.index]
    return t


def headline_counts_html(heads: pd.DataFrame) -> str:
    return f"<div class='hanzilm-verdicts'>{headline_counts(heads).to_html()}</div>"


# ------------------------------------------------------------------ the scorecard (glance page, chapter pages)

CHAPTER_OF_TABLE = {"data/mmtnn_table1": "mmtnn", "data/mslm_table1": "mslm", "data/lm_corpus": "backpack"}
_COLOURS = {"reproduced": "#1a7f37", "holds": "#0969da", "inconclusive": "#9a6700", "fails": "#cf222e",
            "not tested": "#6e7781", "agrees": "#1a7f37", "differs": "#cf222e"}


def scorecard_html(verdicts: pd.DataFrame, paper: str) -> str:
    """One paper's claims as a page-wide HTML table that wraps instead of overflowing: where the paper makes the
    claim, the claim in its words (its evidence behind a click), the verdict, our and the paper's value of the
    quantity checked, its measured spread and how it was measured, and why. The findings first, then the
    checks."""
    from html import escape

    rows = []
    for group, part in _grouped(verdicts[verdicts.paper == paper]):
        if group:
            rows.append(f"<tr><td colspan='7' style='background:#f6f8fa;font-weight:600'>{escape(group)}</td></tr>")
        rows += [_scorecard_row(r) for r in part.itertuples()]
    widths = (9, 31, 11, 7, 7, 13, 22)
    return ("<table class='hanzilm-claims' style='width:100%;table-layout:fixed;border-collapse:collapse;"
            "font-size:0.82em;line-height:1.35'>"
            "<colgroup>" + "".join(f"<col style='width:{w}%'>" for w in widths) + "</colgroup>"
            "<thead><tr><th>table</th><th>claim (the paper's words, where it makes it)</th><th>verdict</th><th>ours</th>"
            "<th>paper</th><th>spread (sd)</th><th>why</th></tr></thead>"
            "<tbody style='vertical-align:top;overflow-wrap:break-word'>" + "".join(rows) + "</tbody></table>")


# how a row that is not the paper's own sentence is labelled, so that it never reads as one
BASIS_LABELS = {"table": "a cell the paper prints", "rebuilt": "a cell rebuilt from the authors' files, not printed",
                "derived": "an ordering we derived from the paper's numbers, not a statement of it"}


def _grouped(mine: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """A paper's rows under the headline each supports (in the headlines' order, the deciding row first), then
    the other findings, then the checks; one group without a title where no row names a headline."""
    findings, checks = mine[mine.kind == "finding"], mine[mine.kind == "check"]
    heads = [h for h in (load_headlines() if HEADLINES.is_file() else []) if h.paper in set(mine.paper)]
    if not heads or not findings.headline.astype(bool).any():
        return [("", pd.concat([findings, checks]))]
    groups = []
    for h in heads:
        part = findings[findings.headline == h.id]
        part = pd.concat([part[part.id == h.decided_by], part[part.id != h.decided_by]])
        groups.append((f"{h.id.split('.')[-1]} · {h.headline}", part))
    rest = findings[~findings.headline.isin([h.id for h in heads])]
    return [*groups, ("Other findings", rest), ("Checks of the setting", checks)]


def _scorecard_row(r) -> str:
    """One claim's row of the scorecard; a row that is not the paper's own sentence says what it is."""
    from html import escape

    evidence = f"<details><summary>evidence</summary>{escape(r.evidence)}</details>" if r.evidence else ""
    note = f"<br><span style='color:#57606a'>{escape(r.note)}</span>" if r.note else ""
    if getattr(r, "basis", "") in BASIS_LABELS:
        note = f"<br><span style='color:#9a6700'>({BASIS_LABELS[r.basis]})</span>" + note
    cites = f"<br><span style='color:#57606a;font-size:0.9em'>{escape(r.cites)}</span>" if r.cites else ""
    check = "<br><span style='color:#57606a'>(a check)</span>" if r.kind == "check" else ""
    spread = "" if math.isnan(r.spread) else (
        f"± {_fmt(r.spread)}<br><span style='color:#57606a'>{escape(r.spread_source)}</span>")
    return (f"<tr><td>{escape(r.table)}</td><td>{escape(r.claim)}{cites}{note}{evidence}</td>"
            f"<td><b style='color:{_COLOURS[r.verdict]}'>{r.verdict}</b>{check}</td>"
            f"<td>{'' if math.isnan(r.ours) else _fmt(r.ours)}</td>"
            f"<td>{'' if math.isnan(r.paper_value) else _fmt(r.paper_value)}</td>"
            f"<td>{spread}</td><td>{escape(r.why)}</td></tr>")


def comparable_numbers(glance_table: pd.DataFrame, paper: str) -> pd.DataFrame:
    """The glance rows (every number of ours with a paper value beside it) of one paper's tables."""
    chapter = glance_table["table"].map(lambda t: CHAPTER_OF_TABLE.get(t, t.split("/")[0]))
    return glance_table[(chapter == paper) & glance_table["ours"].notna()]


def comparison_figure(glance_table: pd.DataFrame, paper: str, band: float = 0.1):
    """Ours against the paper's value for every comparable number of one paper, on log axes (the numbers span
    perplexities, F1 and correlations), with the diagonal and a ±`band` relative tolerance band. No figure (None)
    when the paper has no positive number to draw yet (its chapter has not run at this profile)."""
    import matplotlib.pyplot as plt
    import numpy as np

    rows = comparable_numbers(glance_table, paper)
    positive = rows[(rows["ours"] > 0) & (rows["paper"] > 0)]
    if positive.empty:
        return None, len(rows)
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    lo, hi = positive[["ours", "paper"]].min().min() / 1.5, positive[["ours", "paper"]].max().max() * 1.5
    x = np.geomspace(lo, hi, 50)
    ax.fill_between(x, x * (1 - band), x * (1 + band), color="0.85", label=f"within ±{band:.0%}")
    ax.plot(x, x, color="0.4", lw=0.8)
    for table, part in positive.groupby("table", sort=True):
        ax.scatter(part["paper"], part["ours"], s=16, label=table.split("/")[1], alpha=0.8)
    ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi), xlabel="paper", ylabel="ours",
           title=f"{PAPERS[paper]}: {len(positive)} numbers")
    ax.legend(fontsize=7, frameon=False, loc="upper left", ncol=2)
    fig.tight_layout()
    return fig, len(rows) - len(positive)


def long_table(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The verdicts as a results table (`write_results`): one row per claim, our value of its quantity."""
    return (verdicts.rename(columns={"paper": "chapter"}).assign(metric="quantity")
            [["id", "chapter", "table", "kind", "verdict", "metric", "ours", "paper_value", "spread", "why"]])


# the registry's words: outside its own output (the `hanzilm-claims` tables, `hanzilm-verdicts` text) no page of
# the book may use them, so that a verdict is stated in one place (`stray_verdicts`, tests/test_book.py)
VERDICT_WORDS = re.compile(r"\b(reproduc\w*|holds?|hold(?:ing)?|inconclusive|fail(?:s|ed|ing)?|not tested|"
                           r"confirm\w*|contradict\w*|refut\w*)\b", re.IGNORECASE)
REGISTRY_CLASSES = ("hanzilm-claims", "hanzilm-verdicts")


def stray_verdicts(html: str) -> list[str]:
    """The sentences of a built page that use a verdict word outside the registry's output (its tables and
    text carry REGISTRY_CLASSES): each is a verdict the page states on its own, or a word to rephrase."""
    from html.parser import HTMLParser

    class Text(HTMLParser):
        def __init__(self):
            super().__init__()
            self.skip, self.depth, self.parts = 0, 0, []

        def handle_starttag(self, tag, attrs):
            if tag in ("br", "img", "hr", "meta", "link", "input", "col", "wbr"):
                return
            self.depth += 1
            classes = dict(attrs).get("class") or ""
            if self.skip or any(c in classes.split() for c in REGISTRY_CLASSES) or tag in ("script", "style"):
                self.skip += 1

        def handle_endtag(self, tag):
            if tag in ("br", "img", "hr", "meta", "link", "input", "col", "wbr"):
                return
            self.depth -= 1
            if self.skip:
                self.skip -= 1

        def handle_data(self, data):
            if not self.skip:
                self.parts.append(data)

    parser = Text()
    parser.feed(html)
    text = re.sub(r"\s+", " ", " ".join(parser.parts))
    return [s.strip() for s in re.split(r"(?<=[.;:!?])\s+", text) if VERDICT_WORDS.search(s)]


def verdicts_frame_html(frame: pd.DataFrame) -> str:
    """A table of the registry's verdicts computed elsewhere (an ablation's findings) as registry output."""
    return f"<div class='hanzilm-verdicts'>{frame.to_html(na_rep='')}</div>"


def rules_html() -> str:
    """The verdicts' rules, as the glance page states them (registry text: REGISTRY_CLASSES)."""
    rules = {
        "reproduced": "our value is within the stated tolerance of the paper's, in the paper's direction;",
        "holds": "the direction or ordering the paper states holds, its size does not match; or a value lies beyond "
                 "the paper's on its better side (a higher F1, a lower perplexity);",
        "inconclusive": f"the evidence does not resolve the claim, and the row says why: the effect is within "
                        f"{RESOLVES:g} times its measured spread; its spread is not measured at this profile; or the "
                        "run is short of the scale (training characters) or the sample (seeds) the claim needs;",
        "fails": f"the paper's direction is contradicted beyond {RESOLVES:g} times the spread, or a value is off the "
                 "paper's on its worse side;",
        "not tested": "with the reason (data that could not be obtained, a model not re-run, or two selections that "
                      "picked the same checkpoints, so that one side is a copy of the other).",
    }
    items = "".join(f"<li><b style='color:{_COLOURS[v]}'>{v}</b>: {why}</li>" for v, why in rules.items())
    return (f"<div class='hanzilm-verdicts'><p>A finding's verdict:</p><ul>{items}</ul><p><b>Checks</b> (data-file "
            "and parameter counts: that our setting is the paper's) <i>agree</i> or <i>differ</i> and are counted "
            "apart from the findings. The same numbers never count twice: a claim whose evidence is a copy of "
            "another's is <i>not tested</i> and points to the claim that counted it. A verdict must survive the "
            "replicates (the chapter run again from other seeds, or in other arithmetic): where it moves between "
            "them, it <i>holds</i> if every run reads reproduced or holds, and is <i>inconclusive</i> otherwise, "
            "each run's value in its why.</p></div>")


def summary_html(verdicts: pd.DataFrame, paper: str) -> str:
    """One paper's verdict counts as a sentence (for its chapter's first page)."""
    mine = verdicts[(verdicts.paper == paper) & (verdicts.kind == "finding")]
    n = {v: int((mine.verdict == v).sum()) for v in VERDICTS}
    checks = verdicts[(verdicts.paper == paper) & (verdicts.kind == "check")]
    return (f"<p class='hanzilm-verdicts'>Of this paper's {len(mine)} findings in the claims registry, on this run "
            f"{n['reproduced']} are reproduced, {n['holds']} hold (in direction, or beyond the paper's value on its "
            f"better side), {n['inconclusive']} are inconclusive (within their measured spread, or not resolved at "
            f"this profile), {n['fails']} fail and {n['not tested']} are not tested, each with its reason; "
            f"{int((checks.verdict == 'agrees').sum())} of the {len(checks)} checks of the setting agree with the "
            "paper's.</p>")


def glue_pages(verdicts: pd.DataFrame, heads: pd.DataFrame) -> None:
    """Glue what other pages paste: each paper's verdict counts (for prose), its headline table and its claims
    table (for the chapter's first page, ```{glue} /results_at_a_glance.ipynb::claims_<paper>```)."""
    from IPython.display import HTML
    from myst_nb import glue

    for paper in PAPERS:
        glue(f"headlines_{paper}", HTML(headlines_html(heads, paper)), display=False)
        mine = verdicts[(verdicts.paper == paper) & (verdicts.kind == "finding")]
        for verdict in VERDICTS:
            glue(f"{paper}_{verdict.replace(' ', '_')}", int((mine.verdict == verdict).sum()), display=False)
        glue(f"{paper}_claims", len(mine), display=False)
        checks = verdicts[(verdicts.paper == paper) & (verdicts.kind == "check")]
        glue(f"{paper}_checks", len(checks), display=False)
        glue(f"{paper}_checks_agreeing", int((checks.verdict == "agrees").sum()), display=False)
        glue(f"claims_{paper}", HTML(scorecard_html(verdicts, paper)), display=False)
        glue(f"summary_{paper}", HTML(summary_html(verdicts, paper)), display=False)
    glue_table_pages(verdicts)


def show_paper(verdicts: pd.DataFrame, glance_table: pd.DataFrame, paper: str) -> None:
    """A paper's section of the glance page: its claims, then the figure of its comparable numbers."""
    import matplotlib.pyplot as plt
    from IPython.display import HTML, Markdown, display

    display(HTML(scorecard_html(verdicts, paper)))
    fig, dropped = comparison_figure(glance_table, paper)
    if fig is None:
        display(Markdown(f"(No numbers of {PAPERS[paper]} to compare yet: its chapter has not run at this profile.)"))
        return
    display(fig)
    plt.close(fig)
    if dropped:
        display(Markdown(f"({dropped} of its numbers are zero or negative and left off the log axes.)"))


def pages_of(table: str) -> set[str]:
    """The table pages a claim belongs on, from the registry's `table` label: "Tables 3 and 5" -> {"t3", "t5"},
    "Appendix B" -> {"appB"}, "Table 2 (at scale)" -> {"t2", "scale"}."""
    return ({f"t{n}" for n in re.findall(r"\d+", table.split("/")[0])} | ({"appB"} if "Appendix B" in table else set())
            | ({"scale"} if "at scale" in table else set()))


def glue_table_pages(verdicts: pd.DataFrame) -> None:
    """Glue each table page's claims (`claims_<paper>_<page>`, e.g. claims_mmtnn_t3): the pages paste them from
    this notebook, so that a changed claim or verdict re-runs the glance page alone, never a chapter."""
    from IPython.display import HTML
    from myst_nb import glue

    for paper in PAPERS:
        mine = verdicts[verdicts.paper == paper]
        for page in sorted(set().union(*map(pages_of, mine.table))):
            rows = mine[mine.table.map(lambda t: page in pages_of(t))]
            glue(f"claims_{paper}_{page}", HTML(scorecard_html(rows, paper)), display=False)
