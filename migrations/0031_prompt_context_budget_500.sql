-- Memory given back on a prompt gets up to 500 tokens by default (it was
-- 300): with the excerpts focused on the prompt, the room holds the fact a
-- question asks for more often (bench/README.md, "Recall at the moment of
-- need"). Projects keep whatever they have set; only the default moves.
ALTER TABLE projects ALTER COLUMN prompt_context_budget_tokens SET DEFAULT 500;
