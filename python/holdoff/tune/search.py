"""The tuner's run: the search (grid or a seeded Optuna sampler), the evaluator
that runs each distinct setting once through the sweep machinery, and the
result; see :mod:`holdoff.tune`.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from holdoff import knobs, stats
from holdoff.store import DEFAULT_STORE, ResultStore
from holdoff.sweeps import Executor, SweepError, run_sweep
from holdoff.tune import ports
from holdoff.tune.choose import Point, _score, _settings_text, choose, irq_cores_of, pareto_front
from holdoff.tune.decide import Decision, disruption, settle
from holdoff.tune.space import (
    Candidate,
    _check_host_drivers,
    aggregate,
    candidate,
    drv_of,
    grid_points,
    grid_size,
    point_metrics,
    space,
)
from holdoff.tune.workloads import (
    DEFAULT_SEEDS,
    DEFAULT_TRIALS,
    GRID_MAX,
    MAX_TRIALS,
    Objective,
    TuneError,
    Workload,
    _measures_latency,
    check_driver,
)

# -- the run ----------------------------------------------------------------------------------


@dataclass
class TuneResult:
    driver: str
    chip: str
    workload: Workload
    objective: Objective
    search: str
    grid_size: int
    points: list[Point]
    default: Point
    recommended: Point | None
    reason: str
    front: list[Point]
    skipped: list[str]
    notes: list[str]
    computed: int
    cached: int
    #: Knob settings tried (several may share one run: same registers).
    tried: int = 0
    iface: str = "eth0"
    #: Runs per setting: the scenario's seed, seed + 1, ...
    seeds: int = 1
    first_seed: int = 1
    decision: Decision | None = None
    #: The setting in effect (a ``--from`` host file), or the default.
    current: Point | None = None
    current_source: str = "the driver's default"

    def to_dict(self) -> dict[str, Any]:
        cov = self.workload.coverage
        dec = self.decision
        return {
            "driver": self.driver,
            "chip": self.chip,
            "workload": self.workload.name,
            "workload_description": self.workload.description,
            "objective": self.objective.text,
            "search": self.search,
            "grid_size": self.grid_size,
            "settings_tried": self.tried,
            "evaluated": len(self.points),
            # Runs: every distinct setting once per seed (computed + cached).
            "runs": len(self.points) * self.seeds,
            "computed": self.computed,
            "cached": self.cached,
            "recommended": None if self.recommended is None else self._point(self.recommended),
            "reason": self.reason,
            "default": self._point(self.default),
            "current": self._point(self.current or self.default),
            "current_source": self.current_source,
            "persistent": self._persistent(),
            "front": [p.to_dict(self.iface) for p in self.front],
            # The front in the report's plane: p99 (or throughput) against CPU.
            "front_2d": [
                p.to_dict(self.iface)
                for p in pareto_front(
                    self.points,
                    ("p99", "cpu")
                    if any(not math.isnan(q.metrics.p99_us) for q in self.points)
                    else ("thr", "cpu"),
                )
            ],
            "points": [self._point(p) for p in self.points],
            "not_searched": self.skipped,
            "notes": self.notes,
            "seeds": self.seeds,
            "seed_list": f"{self.first_seed} to {self.first_seed + self.seeds - 1}"
            if self.seeds > 1
            else str(self.first_seed),
            "capture": None if cov is None else cov.to_dict(),
            "latency_of": self.workload.latency_of,
            "current_meets_objective": dec.current_meets if dec else None,
            "ties": dec.ties if dec else 0,
            "difference": dec.difference if dec else "",
            "needs": dec.needs if dec else None,
            "paste": dec.paste if dec else [],
            "alternative": None
            if dec is None or dec.alternative is None
            else self._point(dec.alternative),
            "alternative_difference": dec.alternative_difference if dec else "",
            "alternative_paste": (dec.alternative_paste or []) if dec else [],
        }

    def _persistent(self) -> list[dict[str, Any]]:
        """The recommendation's forms that survive a reboot (none without a change)."""
        rec, cur = self.recommended, self.current or self.default
        if rec is None or rec.key == cur.key:
            return []
        return [f.to_dict() for f in self.forms(rec)]

    def forms(self, point: Point) -> list[knobs.Form]:
        """``point``'s persistent forms: the driver's (:mod:`holdoff.knobs.persist`)
        with the port knobs' ``.link`` keys added to the networkd file, and the
        unit for what systemd.link has no key for (:func:`holdoff.tune.ports.forms`)."""
        c = point.candidate
        try:
            forms = knobs.persistent_forms(
                self.driver, self.iface, drv_of(c.settings), chip=self.chip
            )
        except knobs.KnobError:
            forms = []
        for extra in ports.forms(c.port, c.port_default, self.iface, self.driver):
            same = next((i for i, f in enumerate(forms) if f.path == extra.path), None)
            if same is None:
                forms.append(extra)
                continue
            forms[same] = merge_link(forms[same], extra)
        return forms

    def _point(self, p: Point) -> dict[str, Any]:
        return {**p.to_dict(self.iface), "needs": disruption(p)}


def merge_link(base: knobs.Form, extra: knobs.Form) -> knobs.Form:
    """One ``.link`` file of two for the same interface: ``extra``'s [Link]
    lines added to ``base``'s, each line once (both carry the naming lines of a
    udev-given name)."""
    have = set(base.text.splitlines())
    link = extra.text.split("[Link]\n", 1)[1].splitlines()
    more = "".join(line + "\n" for line in link if line not in have)
    return dataclasses.replace(base, text=base.text + more)


#: (points done, points planned, best so far as text) -> None.
TuneProgress = Callable[[int, int, str], None]


def tune(
    workload: Workload,
    *,
    driver: str,
    objective: Objective,
    chip: str | None = None,
    search: str = "auto",
    trials: int = DEFAULT_TRIALS,
    seed: int = 1,
    store: str | os.PathLike[str] | ResultStore | None = DEFAULT_STORE,
    executor: Executor = "process",
    workers: int | None = None,
    progress: TuneProgress | None = None,
    iface: str = "eth0",
    only: Sequence[str] = (),
    seeds: int = DEFAULT_SEEDS,
    current: Mapping[str, int] | None = None,
    current_source: str = "the driver's default",
) -> TuneResult:
    """Search ``driver``'s knobs on ``workload`` for ``objective``; ``only``
    restricts the search to those knobs (the others stay at the driver's
    defaults). Each setting runs ``seeds`` times (the scenario's seed,
    seed + 1, ...) and is scored by its means, with 95 % intervals; the
    choice treats settings within each other's interval as ties
    (:func:`holdoff.tune.decide.settle`). ``current``: the knob values in
    effect (e.g. from a ``holdoff collect`` host file), run beside the
    candidates; the paste block changes only what differs from them."""
    check_driver(driver)
    if search not in ("auto", "grid", "optuna"):
        raise TuneError("--search", f"unknown search {search!r}; use auto, grid or optuna")
    if isinstance(trials, bool) or not isinstance(trials, int) or not 1 <= trials <= MAX_TRIALS:
        raise TuneError(
            "--trials",
            f"must be a whole number from 1 to {MAX_TRIALS:,} (the sampler also stops once "
            f"every distinct setting is tried), got {trials!r}",
        )
    try:
        stats.parse_seeds(seeds)
    except ValueError as err:
        raise TuneError("--seeds", str(err).removeprefix("--seeds ")) from err
    if chip is not None:
        knobs.chip_for(driver, chip)
    if objective.kind == "cores" and not ports.has_ports(driver):
        raise TuneError(
            "--objective",
            f"fewest-cores searches the queues and their cores, which the tuner does for "
            f"{', '.join(ports.PORT_DRIVERS)}, not {driver}",
        )
    needs_latency = objective.kind in ("latency", "cpu") or (
        objective.kind == "cores" and not math.isnan(objective.bound)
    )
    if needs_latency and not _measures_latency(workload):
        raise TuneError(
            "--objective",
            f"{objective.text!r} needs a latency, and this workload measures none (no ping, "
            "request/response, UDP sink or NetPIPE application): use max-throughput or pareto",
        )
    grid, skipped = space(driver, workload)
    if only:
        unknown = [k for k in only if k not in grid]
        if unknown:
            raise TuneError(
                "--knob",
                f"{unknown[0]!r} is not a knob the tuner searches for {driver}; "
                f"those are: {', '.join(grid)}",
            )
        held = [k for k in grid if k not in only]
        if held:
            skipped.append(f"{', '.join(held)}: held at the driver's defaults (--knob)")
        grid = {k: v for k, v in grid.items() if k in only}
    notes = list(workload.notes) + _check_host_drivers(driver, workload)
    n = grid_size(grid)
    mode = search if search != "auto" else ("grid" if n <= GRID_MAX else "optuna")
    evaluator = _Evaluator(workload, driver, chip, store, executor, workers, seeds)
    default_settings = {k: v[0] for k, v in grid.items()}
    if mode == "grid":
        planned = grid_points(grid)
        if progress is not None:
            evaluator.progress = lambda done: progress(
                done, len(planned), evaluator.best_text(objective)
            )
        evaluator.evaluate(planned)
        if progress is not None:
            progress(len(planned), len(planned), evaluator.best_text(objective))
    else:
        _optuna_search(evaluator, grid, default_settings, objective, trials, seed, progress)
    points = evaluator.points()
    default = evaluator.point_of(default_settings)
    now = default if current is None else evaluator.point_of(current)
    points = evaluator.points()
    decision = settle(points, objective, now, iface, default=default)
    if needs_latency and all(math.isnan(p.metrics.p99_us) for p in points):
        raise TuneError(
            "--objective",
            f"{objective.text!r} needs a latency, and no run of this workload measured one "
            "(did its latency application receive anything?): use max-throughput or pareto",
        )
    return TuneResult(
        driver=driver,
        chip=default.candidate.decoded.chip.name,
        workload=workload,
        objective=objective,
        search=mode if mode == "grid" else f"optuna ({trials} trials, seed {seed})",
        grid_size=n,
        points=points,
        default=default,
        recommended=decision.pick,
        reason=decision.reason,
        front=pareto_front(points),
        skipped=skipped,
        notes=notes,
        computed=evaluator.computed,
        cached=evaluator.cached,
        tried=len(evaluator.tried),
        iface=iface,
        seeds=seeds,
        first_seed=int(workload.scenario.get("seed", 1)),
        decision=decision,
        current=now,
        current_source="the driver's default" if current is None else current_source,
    )


class _Evaluator:
    """Runs candidates through the sweep machinery (store, executors), once per
    distinct scenario."""

    def __init__(
        self,
        workload: Workload,
        driver: str,
        chip: str | None,
        store: str | os.PathLike[str] | ResultStore | None,
        executor: Executor,
        workers: int | None,
        seeds: int = 1,
    ) -> None:
        self.seeds = seeds
        self.workload = workload
        self.driver = driver
        self.chip = chip
        self.store = (
            store if isinstance(store, ResultStore) or store is None else ResultStore(store)
        )
        self.executor = executor
        self.workers = workers
        self.by_changes: dict[str, Point] = {}
        self.by_settings: dict[str, Point] = {}
        self.order: list[str] = []
        #: Knob settings asked for (before canonicalisation).
        self.tried: set[str] = set()
        self.computed = 0
        self.cached = 0
        self.done = 0
        self.progress: Callable[[int], None] | None = None

    def _id(self, obj: Any) -> str:
        from holdoff.store import canonical_json

        return canonical_json(obj)

    def evaluate(self, settings_list: Sequence[Mapping[str, int]]) -> list[Point]:
        """Points for ``settings_list`` (in order), running only scenarios not run yet."""
        new: dict[str, Candidate] = {}
        ids: list[tuple[str, str]] = []
        for settings in settings_list:
            sid = self._id(dict(settings))
            self.tried.add(sid)
            if sid in self.by_settings:
                ids.append((sid, ""))
                continue
            try:
                cand = candidate(self.driver, settings, self.workload, self.chip)
            except knobs.KnobError as err:
                raise TuneError(err.key, err.message) from err
            cid = self._id(cand.changes)
            ids.append((sid, cid))
            if cid not in self.by_changes:
                new.setdefault(cid, cand)
        if new:
            self._run(new)
        out = []
        for (sid, cid), settings in zip(ids, settings_list, strict=True):
            if sid not in self.by_settings:
                point = self.by_changes[cid]
                if point.candidate.settings != dict(settings):
                    point.equivalent.append(dict(settings))
                self.by_settings[sid] = point
            out.append(self.by_settings[sid])
        return out

    def _run(self, new: Mapping[str, Candidate]) -> None:
        base = copy.deepcopy(self.workload.scenario)
        seed = int(base.get("seed", 1))
        seeds = [seed + k for k in range(self.seeds)]
        sweep = {
            "name": f"tune-{self.workload.name}",
            "base": base,
            "seed": seed,
            # Every setting runs the same seeds (common random numbers), so
            # two settings' per-seed differences are paired.
            "points": [{**c.changes, "seed": s} for c in new.values() for s in seeds],
        }
        start = self.done
        per = len(seeds)

        def step(done: int, total: int) -> None:
            self.done = start + done // per
            if self.progress is not None:
                self.progress(self.done)

        try:
            result = run_sweep(
                sweep,
                store=self.store,
                executor=self.executor if len(new) * per > 1 else "serial",
                workers=self.workers,
                progress=step,
            )
        except SweepError as err:
            raise TuneError(err.field or "scenario", str(err)) from err
        self.computed += result.computed
        self.cached += result.cached
        self.done = start + len(new)
        if self.progress is not None:
            self.progress(self.done)
        for i, (cid, cand) in enumerate(new.items()):
            sps = result.points[i * per : (i + 1) * per]
            runs = [point_metrics(result.records[sp.key], self.workload) for sp in sps]
            point = Point(cand, aggregate(runs), sps[0].key)
            self.by_changes[cid] = point
            self.by_settings[self._id(cand.settings)] = point
            self.order.append(cid)

    def points(self) -> list[Point]:
        return [self.by_changes[c] for c in self.order]

    def point_of(self, settings: Mapping[str, int]) -> Point:
        return self.evaluate([settings])[0]

    def best_text(self, objective: Objective) -> str:
        pts = self.points()
        if not pts:
            return ""
        pick, _ = choose(pts, objective)
        if pick is None:
            return "none meets the objective yet"
        m = pick.metrics
        lat = "" if math.isnan(m.p99_us) else f"p99 {m.p99_us:.1f} us, "
        return f"{_settings_text(pick)}: {lat}CPU {m.cpu_util * 100:.1f} %"


def _optuna_search(
    ev: _Evaluator,
    grid: Mapping[str, Sequence[int]],
    default: Mapping[str, int],
    objective: Objective,
    trials: int,
    seed: int,
    progress: TuneProgress | None,
) -> None:
    """Seeded Optuna search in batches (one batch runs in parallel on the
    executor); the default setting is the first trial."""
    try:
        import optuna
    except ImportError as err:  # pragma: no cover - a declared dependency
        raise TuneError("--search", "the optuna search needs Optuna: pip install optuna") from err
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if objective.kind == "pareto":
        sampler: Any = optuna.samplers.NSGAIISampler(seed=seed, population_size=16)
        study = optuna.create_study(
            directions=["minimize", "minimize", "minimize", "maximize"], sampler=sampler
        )
    else:
        sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=16, multivariate=True)
        study = optuna.create_study(direction="minimize", sampler=sampler)
    study.enqueue_trial(dict(default))
    batch = max(2, (ev.workers or os.cpu_count() or 1) * 2)
    done = 0
    distinct = grid_size(grid)
    while done < trials and len(ev.tried) < distinct:
        n = min(batch, trials - done)
        asked = [study.ask() for _ in range(n)]
        settings = [
            {k: int(t.suggest_categorical(k, list(values))) for k, values in grid.items()}
            for t in asked
        ]
        points = ev.evaluate(settings)
        for t, p in zip(asked, points, strict=True):
            m = p.metrics
            if objective.kind == "pareto":
                big = 1e12
                study.tell(
                    t,
                    [
                        big if math.isnan(m.p99_us) or m.drops else m.p99_us,
                        big if math.isnan(m.cpu_util) or m.drops else m.cpu_util,
                        big if m.drops else m.interrupts_per_s,
                        0.0 if m.drops or math.isnan(m.throughput_bps) else m.throughput_bps,
                    ],
                )
            else:
                study.tell(t, _score(m, objective, irq_cores_of(p)))
        done += n
        if progress is not None:
            progress(done, trials, ev.best_text(objective))
