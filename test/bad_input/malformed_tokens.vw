1 |f a:1,5 b
abc |f c
1 2 3 4 5 |f d
1 |:3 e
-1 |f e:
