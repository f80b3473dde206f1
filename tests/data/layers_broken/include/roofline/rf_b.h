/* io's header */
int rf_b_load(void);
