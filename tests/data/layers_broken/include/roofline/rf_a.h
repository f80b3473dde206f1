/* core's header, declaring one function of io as well */
int rf_a_count(void);
int rf_a_read(void);
