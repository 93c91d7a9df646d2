def calculate_total(prices):
    return sum(prices)


if __name__ == "__main__":
    print(calculate_total([3, 4, 5]))
