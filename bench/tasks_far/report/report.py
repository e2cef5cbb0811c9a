from stats import mean, share


def summary(scores, passed):
    return {"mean": round(mean(scores), 2), "pass_rate": share(passed, len(scores))}
