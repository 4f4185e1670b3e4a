from jaxstatic import Static, jit


def log_calls(f):
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)
    return wrapper


@jit  # seeded: jaxstatic-signature
@log_calls
def power(x, n: Static[int]):
    return x**n
