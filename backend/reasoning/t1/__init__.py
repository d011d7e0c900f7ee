"""T1: tool-integrated verification for best-of-N with a small reasoning model.

Paper: Kang, Jeong, Cho, "T1: Tool-integrated Verification for Test-time Compute Scaling in Small Language Models"
(ICLR 2026; arXiv 2504.04718). A tool (a code interpreter) first vetoes candidates whose calculations are wrong,
then a small reward model ranks the survivors: y* = argmax_i f(x, y_i; tool) r(x, y_i), f in {0, 1}.

Implemented: the tool verifier, a sandboxed interpreter that re-checks every ``a op b = c`` of a candidate and its
final answer from a check program written from its steps (``tool``); the reward model, a logistic head on the tiny
reasoner's penultimate-layer state at a candidate's last token (``rm``, trained by ``python -m backend.train t1``);
candidate sets from the reasoner's own samples (through :mod:`backend.reasoning.candidates`) or from gold solutions
with injected arithmetic slips (a wrong result) and logic slips (a wrong operation or quantity, every calculation
right) (``slips``); the selectors' exact best-of-N curves (``select``); the jobs (``jobs``). Left out: the paper's
ToolV, in which the small LM itself writes the check program and reads its output (here the lab writes it from the
steps), and its distilled generative reward models.

| name | label | kind | what |
|------|-------|------|------|
| ``tool_rm`` | T1: tool veto x RM (ours) | ours | argmax f r: the RM's best among the candidates the tool passes |
| ``tool`` | Tool only | ablation | a uniform choice among the candidates the tool passes |
| ``rm`` | RM only | baseline | argmax r |
| ``majority`` | Majority vote | baseline | the most frequent answer |
| ``weighted_majority`` | RM-weighted majority vote | baseline | the answer with the largest sum of r |
| ``oracle`` | Oracle | reference | a right candidate whenever the subset holds one |

(``select.SELECTORS``.) Shapes: candidate arrays [P, N] (problems x candidates); reward-model features [M, c] with c
the reasoner's width. ``run_bon(BonConfig) -> BonResult`` (curves per selector at n = 1..N, veto rates, costs);
``run_question(QuestionConfig) -> QuestionResult`` (one question's candidates, verdicts, scores and picks).
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "Limits": "tool", "ToolError": "tool", "Verdict": "tool", "Check": "tool", "verify": "tool",
    "run_program": "tool", "extract_steps": "tool", "check_program": "tool", "final_answer": "tool",
    "SELECTORS": "select", "CandidateScores": "select", "curves": "select", "per_problem": "select",
    "SlipCandidate": "slips", "arithmetic_slip": "slips", "logic_slip": "slips", "candidate_set": "slips",
    "RewardModel": "rm", "features": "rm", "fit": "rm",
    "BonConfig": "jobs", "BonResult": "jobs", "run_bon": "jobs", "QuestionConfig": "jobs", "QuestionResult": "jobs",
    "run_question": "jobs", "candidate_scores": "jobs", "load_rm": "jobs",
})
