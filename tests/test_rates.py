"""New and fixed from failure rates: the statistics, and ``compare`` of summarizers that answer at random."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from harness._app._compare import compare
from harness._app._rates import FAMILY_ALPHA, Change, Rate, alpha_per_test, judge_rates
from harness._app.running._options import RunConfig

VARYING = str(Path(__file__).resolve().parent / "fixtures" / "varying.py")
rates = st.integers(1, 15).flatmap(lambda of: st.builds(Rate, st.integers(0, of), st.just(of)))


def test_a_rate_is_a_count_of_trials():
    with pytest.raises(ValueError):
        Rate(4, 3)
    with pytest.raises(ValueError):
        Rate(-1, 3)
    assert Rate(2, 5).plus(Rate(1, 7)) == Rate(3, 12)
    assert Rate(3, 12).text == "3 of 12 (9-53%)"


def test_the_wilson_interval_matches_its_formula_at_known_points():
    low, high = Rate(0, 10).interval()
    assert low == 0 and high == pytest.approx(0.2775, abs=1e-4)
    low, high = Rate(5, 10).interval()
    assert (low, high) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))
    assert Rate(0, 0).interval() == (0.0, 1.0)


def test_fishers_exact_test_gives_the_textbook_p_value():
    # Fisher's tea tasting: 3 of 4 right against 1 of 4; one-sided p = 17/70, two-sided twice that
    verdict = judge_rates(Rate(1, 4), Rate(3, 4), alpha=0.05)
    assert verdict.p_value == pytest.approx(2 * 17 / 70)
    assert verdict.change is Change.SHARED
    # every trial of one side against none of the other's: 1 / C(2n, n) one-sided
    assert judge_rates(Rate(0, 6), Rate(6, 6), alpha=1).p_value == pytest.approx(2 / math.comb(12, 6))


@pytest.mark.parametrize("base, other, change", [
    (Rate(0, 12), Rate(12, 12), Change.NEW),
    (Rate(12, 12), Rate(0, 12), Change.FIXED),
    (Rate(0, 3), Rate(3, 3), Change.UNSURE),  # p = 0.1: three trials a side cannot tell
    (Rate(4, 12), Rate(6, 12), Change.SHARED),
    (Rate(0, 12), Rate(0, 12), Change.ABSENT),
])
def test_each_change_at_a_strict_threshold(base, other, change):
    assert judge_rates(base, other, alpha=alpha_per_test(20)).change is change


@given(rates, rates)
def test_new_one_way_is_fixed_the_other(a, b):
    forward, backward = judge_rates(a, b, alpha=0.05), judge_rates(b, a, alpha=0.05)
    assert forward.p_value == pytest.approx(backward.p_value)
    flipped = {Change.NEW: Change.FIXED, Change.FIXED: Change.NEW}
    assert backward.change is flipped.get(forward.change, forward.change)


@given(rates, rates)
def test_new_and_fixed_never_go_against_the_observed_shares(a, b):
    verdict = judge_rates(a, b, alpha=0.05)
    if verdict.change is Change.NEW:
        assert Fraction(b.failed, b.of) > Fraction(a.failed, a.of)
    if verdict.change is Change.FIXED:
        assert Fraction(b.failed, b.of) < Fraction(a.failed, a.of)


@pytest.mark.parametrize("trials", [3, 6, 12])
@pytest.mark.parametrize("rate", [0.05, 0.3, 0.5, 0.9])
@pytest.mark.parametrize("alpha", [0.05, 0.005])
def test_when_nothing_changed_new_or_fixed_comes_no_more_often_than_the_threshold(trials, rate, alpha):
    """The exact chance of a false NEW or FIXED when both sides fail at one true rate: summed over every
    outcome of the two sides' trials, never above the test's threshold."""
    def chance(k: int) -> float:
        return math.comb(trials, k) * rate ** k * (1 - rate) ** (trials - k)

    false_alarm = sum(chance(a) * chance(b) for a in range(trials + 1) for b in range(trials + 1)
                      if judge_rates(Rate(a, trials), Rate(b, trials), alpha=alpha).change in (Change.NEW, Change.FIXED))
    assert false_alarm <= alpha


def test_the_family_threshold_is_shared_by_its_tests():
    assert alpha_per_test(10) == pytest.approx(FAMILY_ALPHA / 10)
    assert alpha_per_test(0) == FAMILY_ALPHA


def _compare(first: str, second: str, seed: int, **options):
    configs = [RunConfig.of(f"{VARYING}:{name}", examples=15, max_turns=200, quiet=True, seed=seed)
               for name in (first, second)]
    return compare(configs, **options)


def test_two_summarizers_that_answer_alike_at_random_differ_in_nothing(monkeypatch):
    raw_differences = 0
    for seed in (1, 4, 6):
        monkeypatch.setenv("VARYING_SEED", str(seed))
        comparison = _compare("noisy", "noisy_too", seed)
        assert comparison.rated is not None
        base, other = comparison.sides
        assert comparison.new(other) == {} and comparison.fixed(other) == {}, seed
        assert comparison.exit_code == 0
        crashed = dataclasses.replace(comparison, rated=dataclasses.replace(comparison.rated,
                                                                            summarizer_failed=("x: raised: boom",)))
        assert crashed.exit_code == 3  # a trial the summarizer failed in was not judged: never a clean exit 0
        raw_differences += {f.key for f in base.run.failures} != {f.key for f in other.run.failures}
    assert raw_differences  # the runs found different failures: a gate on what each found would have said new


def test_a_true_fix_and_a_true_break_are_reported_from_the_rates(monkeypatch):
    monkeypatch.setenv("VARYING_SEED", "1")
    comparison = _compare("softens", "rounds", 1)
    other = comparison.sides[1]
    assert set(comparison.fixed(other)) == {("run", "negation-polarity", "prohibition")}
    assert set(comparison.new(other)) == {("run", "threshold-exact", "threshold")}
    assert comparison.exit_code == 1
    rates = comparison.rated.rates[("run", "threshold-exact", "threshold")]
    assert rates[0].failed == 0 and rates[1].failed > 0 and rates[0].of == rates[1].of == 15


def test_without_more_trials_a_break_seen_in_three_trials_is_only_unsure(monkeypatch):
    monkeypatch.setenv("VARYING_SEED", "1")
    comparison = _compare("softens", "rounds", 1, settle=0)
    other = comparison.sides[1]
    assert comparison.new(other) == {} and comparison.fixed(other) == {}  # three trials a side prove nothing
    assert ("run", "negation-polarity", "prohibition") in comparison.unsure(other)
    assert comparison.exit_code == 0


def test_a_summarizer_that_does_not_vary_is_compared_by_what_each_side_found():
    mutants = "harness.summarizers.mutants"
    configs = [RunConfig.of(spec, examples=8, max_turns=200, quiet=True, isolation="inline", seed=3)
               for spec in ("harness.summarizers.prose:summarize", f"{mutants}:softens_prohibition")]
    comparison = compare(configs)
    assert comparison.rated is None
    assert ("run", "negation-polarity", "prohibition") in comparison.new(comparison.sides[1])


def _night(name: str, seed: int, monkeypatch, examples: int) -> dict:
    from harness._app.reports._document import report_dict
    from harness._app.running._run import run

    monkeypatch.setenv("VARYING_SEED", str(seed))
    return report_dict(run(RunConfig.of(f"{VARYING}:{name}", examples=examples, max_turns=200, quiet=True,
                                    seed=seed)))


def test_nights_of_a_summarizer_answering_at_random_show_nothing_new_or_fixed(monkeypatch):
    from harness._app.reports._trend import diff_reports, findings_of

    nights = [_night("noisy", seed, monkeypatch, 20) for seed in (1, 2, 3)]
    differ = 0
    for old, new in zip(nights, nights[1:]):
        trend = diff_reports(old, new)
        assert trend.rated and trend.new == () and trend.fixed == (), trend
        differ += {f.key for f in findings_of(old)} != {f.key for f in findings_of(new)}
    assert differ  # what each night found differs: a gate on presence would have said new or fixed


def test_a_night_that_truly_fixes_one_bug_and_breaks_another_says_so(monkeypatch):
    from harness._app.reports._trend import diff_reports

    trend = diff_reports(_night("softens", 3, monkeypatch, 30), _night("rounds", 4, monkeypatch, 30))
    assert {(f.invariant, f.fact_kind) for f in trend.new} == {("threshold-exact", "threshold")}
    assert {(f.invariant, f.fact_kind) for f in trend.fixed} == {("negation-polarity", "prohibition")}


def test_a_failure_that_could_never_be_significant_does_not_share_the_threshold():
    from harness._app._rates import family_threshold

    strong = (Rate(0, 15), Rate(12, 15))
    never = (Rate(1, 3), Rate(0, 3))  # one failure in all: no split of it is beyond chance
    assert family_threshold([strong, never, never, never]) == (FAMILY_ALPHA, 1)
    assert family_threshold([strong, strong], looks=2) == (FAMILY_ALPHA / 4, 2)


def _splits(base: Rate, other: Rate):
    failed = base.failed + other.failed
    return [(Rate(k, base.of), Rate(failed - k, other.of)) for k in range(failed + 1)
            if k <= base.of and failed - k <= other.of]


@given(st.lists(st.tuples(rates, rates), max_size=8), st.integers(1, 2))
def test_the_family_threshold_is_never_stricter_than_bonferroni_and_counts_every_test_that_could_pass(tables, looks):
    """Tarone's condition: no more tests could reach the threshold, by any split of their failures, than it
    divides the family's chance between."""
    from harness._app._rates import family_threshold

    alpha, counted = family_threshold(tables, looks=looks)
    assert alpha >= FAMILY_ALPHA / (max(1, len(tables)) * looks)
    assert alpha == pytest.approx(FAMILY_ALPHA / (max(1, counted) * looks))
    could_pass = sum(any(judge_rates(*split, alpha=alpha).p_value <= alpha for split in _splits(*table))
                     for table in tables)
    assert could_pass <= max(1, counted)


def test_the_compare_report_carries_the_rates_and_junit_lists_unsure_without_failing(monkeypatch, tmp_path):
    import json
    import xml.etree.ElementTree as ET

    from harness._app.cli._main import main

    monkeypatch.setenv("VARYING_SEED", "1")
    report, junit = tmp_path / "c.json", tmp_path / "c.xml"
    code = main(["compare", "--summarizer", f"{VARYING}:softens", "--summarizer", f"{VARYING}:rounds", "--examples",
                 "15", "--seed", "1", "--max-turns", "200", "--settle-trials", "0", "--quiet", "--report-json",
                 str(report), "--junit-xml", str(junit)])
    document = json.loads(report.read_text())
    assert code == 0 and document["comparison_version"] == 2
    rates = document["rates"]
    assert rates["trials"] == 3 and rates["settle_trials"] == 0 and "Fisher" in rates["test"]
    (against,) = document["against_baseline"]
    assert against["new"] == [] and against["unsure"]
    assert all(len(row["rates"]) == 2 and row["against_baseline"][0]["change"] in
               ("new", "fixed", "unsure", "shared", "absent") for row in rates["failures"])
    case = next(c for c in ET.parse(junit).getroot().iter("testcase") if c.get("name").startswith("no new failures"))
    assert case.find("failure") is None and "unsure:" in case.find("system-out").text
    page = tmp_path / "c.html"
    assert main(["report", str(report), "-o", str(page)]) == 0
    assert 'data-change="unsure"' in page.read_text() and f"{len(against['unsure'])} unsure</h2>" in page.read_text()
