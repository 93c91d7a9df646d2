from pathlib import Path

numbers = [float(x) for x in Path('numbers.txt').read_text().split()]
print(f"mean: {sum(numbers) / len(numbers)}")
