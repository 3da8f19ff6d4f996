"""Generation metrics judged by an LLM (faithfulness, answer relevancy, ...) and their pure arithmetic."""
