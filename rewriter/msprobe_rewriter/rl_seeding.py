"""The generators of reinforcement-learning code that `random`, NumPy and torch seeding does not reach (seed-partial):
a gymnasium (or gym) env's, seeded by its first `reset(seed=...)`, an action space's, seeded by `space.seed(...)`,
and those a Stable-Baselines3 algorithm built without a seed trains with (see `catalogue.SB3_ALGORITHMS`)."""

from __future__ import annotations

import ast
from collections.abc import Callable

from msprobe_rewriter import catalogue, conditions, seeding
from msprobe_rewriter.conditions import condition_text
from msprobe_rewriter.context import NOT_CONSTANT, FileContext, constant, keyword, target_name

RESET = ("`{call}` without `seed=` seeds the env's generator from OS entropy (gymnasium seeds it at the first reset "
         "given no seed), which `random`/NumPy/torch seeding does not reach (this file seeds {seeded}): call "
         "`{owner}.reset(seed=seed)` once at the start (later resets continue its generator)")
SAMPLE = ("`{call}` draws from the action space's own generator, seeded from OS entropy, which `random`/NumPy/torch "
          "seeding does not reach (this file seeds {seeded}): call `{owner}.seed(seed)` once at the start")
ALGORITHM = ("`{name}(...)` {given}, so Stable-Baselines3 seeds nothing: the env `{name}.learn()` trains on (and the "
             "action space off-policy algorithms draw warm-up actions from) starts from OS entropy{numpy} (this file "
             "seeds {seeded}): pass `seed=seed` to `{name}(...)`, which seeds `random`, NumPy, torch, the env and "
             "the action space")
NUMPY = (", and its replay sampling, minibatch order, exploration and action noise draw from NumPy's global "
         "generator, which this file leaves unseeded")


def unseeded(ctx: FileContext, labels: Callable[[frozenset[str]], str]) -> list[tuple[ast.AST, str]]:
    """The first unseeded env reset and action-space draw, and the unseeded Stable-Baselines3 algorithms, of an entry
    script that otherwise seeds some generator family (one that seeds none is seed-missing's), each with its message
    (`labels`: the text naming the families seeded)."""
    facts = seeding.analyse(ctx)
    calls = sorted((node for node in ast.walk(ctx.tree) if isinstance(node, ast.Call)),
                   key=lambda node: (node.lineno, node.col_offset))
    algorithms = _unseeded_algorithms(ctx, facts, calls)
    seeded = frozenset().union(*(effect.summary.families for effect in facts.effects if effect.node not in algorithms))
    if not seeded:
        return []
    numpy = facts.default_run(lambda e: "numpy" in e.summary.families and e.node not in algorithms).pinned
    found = [(algorithm, ALGORITHM.format(name=condition_text(algorithm.func), given=given, seeded=labels(seeded),
                                          numpy="" if numpy else NUMPY)) for algorithm, given in algorithms.items()]
    if any(ctx.imports.imports_root(root) for root in catalogue.GYM_ROOTS):
        found += [(call, message.format(seeded=labels(seeded))) for call, message in _gym(ctx, calls)]
    return found


def _gym(ctx: FileContext, calls: list[ast.Call]) -> list[tuple[ast.Call, str]]:
    """The first reset of an env a gymnasium call made (`gym.make`, `gym.vector.SyncVectorEnv`, a wrapper) that is
    not given a seed, when no reset or `env.seed(s)` before it seeded one, and the first `*.action_space.sample()`
    before any `*.action_space.seed(s)` (messages with `{seeded}` left to fill)."""
    envs = {target_name(target) for node in ast.walk(ctx.tree) if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call) and _from_gym(ctx, node.value) for target in node.targets}
    found: list[tuple[ast.Call, str]] = []
    reset = sample = False  # settled: a seeded one came first, or the first unseeded one is reported
    for call in calls:
        func = call.func
        if not isinstance(func, ast.Attribute):
            continue
        text, owner = condition_text(func) + "()", condition_text(func.value)
        if func.attr in ("reset", "seed") and target_name(func.value) in envs and not reset:
            reset = True
            seed = keyword(call, "seed") if func.attr == "reset" else (call.args or [None])[0]
            if seed is None or constant(seed) is None:
                found.append((call, RESET.replace("{call}", text).replace("{owner}", owner)))
        elif func.attr in ("sample", "seed") and getattr(func.value, "attr", None) in catalogue.GYM_ACTION_SPACES \
                and not sample:
            sample = True
            if func.attr == "sample":
                found.append((call, SAMPLE.replace("{call}", text).replace("{owner}", owner)))
    return found


def _from_gym(ctx: FileContext, call: ast.Call) -> bool:
    qualified = ctx.imports.resolve_any(call.func) or ""
    return qualified.partition(".")[0] in catalogue.GYM_ROOTS


def _unseeded_algorithms(ctx: FileContext, facts: seeding.FileSeeding, calls: list[ast.Call]) -> dict[ast.Call, str]:
    """The Stable-Baselines3 algorithms the file trains (`model.learn(...)` of a name assigned one, or
    `PPO(...).learn(...)`) that seed nothing with the default arguments, each with how its seed is given."""
    built = {target_name(node.targets[0]): node.value for node in ast.walk(ctx.tree) if isinstance(node, ast.Assign)
             and len(node.targets) == 1 and isinstance(node.value, ast.Call)
             and ctx.built_qualname(node.value) in catalogue.SB3_ALGORITHMS}
    learned = [call.func.value if isinstance(call.func.value, ast.Call) else built.get(target_name(call.func.value))
               for call in calls if isinstance(call.func, ast.Attribute) and call.func.attr == catalogue.SB3_LEARN
               and ctx.is_trainer_run(call)]
    return {algorithm: given for algorithm in learned if algorithm is not None
            and (given := _unseeded(algorithm, facts)) is not None}


def _unseeded(algorithm: ast.Call, facts: seeding.FileSeeding) -> str | None:
    """How an algorithm's constructor leaves it unseeded with the default arguments, else None."""
    seed = keyword(algorithm, "seed")
    literal = constant(seed) if seed is not None else None
    if literal is None:
        return "is given no seed" if seed is None else "is given `seed=None`"
    if literal is NOT_CONSTANT and conditions.value(seed, facts.lookup) is None:
        return f"is given `seed={condition_text(seed)}`, None with the default arguments"
    return None
