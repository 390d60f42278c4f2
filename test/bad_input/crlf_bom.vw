1 |f a b
-1 |f c
﻿1 |f d
