"""Sun & Hewitt (2023), Character-level Chinese Backpack Language Models."""
