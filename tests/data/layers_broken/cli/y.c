int x_run(int n);

int y_run(int n)
{
    return n > 0 ? x_run(n - 1) : 0;
}
