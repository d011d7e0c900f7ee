"""T1: tool-integrated verification for best-of-N with a small reasoning model.

Paper: Kang, Jeong, Cho, "T1: Tool-integrated Verification for Test-time Compute Scaling in Small Language Models"
(ICLR 2026; arXiv 2504.04718). A tool (a code interpreter) first vetoes candidates whose calculations are wrong,
then a small reward model ranks the survivors: y* = argmax_i f(x, y_i; tool) r(x, y_i), f in {0, 1}.

Implemented: the tool verifier, a sandboxed interpreter that re-checks every ``a op b = c`` of a candidate and the
final answer from a check program written from its steps (``tool``), and candidate sets built from the task
generator's gold solutions with injected arithmetic slips (a wrong result) and logic slips (a wrong operation or
quantity, every calculation right) at chosen rates (``slips``), and the selectors' exact best-of-N curves
(``select``).

The selectors (``select.SELECTORS``):

| name | label | kind | what |
|------|-------|------|------|
| ``tool_rm`` | T1: tool veto x RM (ours) | ours | argmax f r: the RM's best among the candidates the tool passes |
| ``tool`` | Tool only | ablation | a uniform choice among the candidates the tool passes |
| ``rm`` | RM only | baseline | argmax r |
| ``majority`` | Majority vote | baseline | the most frequent answer |
| ``weighted_majority`` | RM-weighted majority vote | baseline | the answer with the largest sum of r |
| ``oracle`` | Oracle | reference | a right candidate whenever the subset holds one |

Shapes: a candidate is its text in the tiny reasoner's ``<think> steps </think> answer`` format or free text;
:func:`verify` returns a :class:`Verdict`.
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "Limits": "tool", "ToolError": "tool", "Verdict": "tool", "Check": "tool", "verify": "tool",
    "run_program": "tool", "extract_steps": "tool", "check_program": "tool", "final_answer": "tool",
    "SELECTORS": "select", "CandidateScores": "select", "curves": "select", "per_problem": "select",
    "SlipCandidate": "slips", "arithmetic_slip": "slips", "logic_slip": "slips", "candidate_set": "slips",
})
