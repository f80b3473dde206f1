int y_run(int n);

int x_run(int n)
{
    return n > 0 ? y_run(n - 1) : 0;
}
